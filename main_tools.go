package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/popshim/popshim/tools"
)

// sendCommand wires `popshim send`, the smoke-test producer, to tools.Send.
func sendCommand() *cobra.Command {
	var o tools.SendOptions
	cmd := &cobra.Command{
		Use:     "send",
		Short:   "Send messages through the name server (SEND_MESSAGE_V2): a smoke test without Java",
		Example: "  popshim send --namesrv 127.0.0.1:9876 --topic TopicTest --count 10 --body hello --tags TagA --keys k1",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			if err := checkToolFlags(o.Topic, o.ProducerGroup, o.Count, o.Timeout); err != nil {
				return err
			}
			o.Out = cmd.OutOrStdout()
			_, err := tools.Send(ctx, o)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Namesrv, "namesrv", "127.0.0.1:9876", "name server address host:port ('a:9876;b:9876' for several)")
	f.StringVar(&o.Topic, "topic", "TopicTest", "topic; an unknown one is created by the first SEND (--auto-create-topic)")
	f.StringVar(&o.ProducerGroup, "group", "smoke_producer", "producer group")
	f.IntVar(&o.Count, "count", 1, "messages to send, at least 1")
	f.StringVar(&o.Body, "body", "Hello popshim", "body of every message")
	f.StringVar(&o.Tags, "tags", "", "TAGS property (e.g. TagA); empty sends none")
	f.StringVar(&o.Keys, "keys", "", "KEYS property (space-separated keys); empty sends none")
	f.DurationVar(&o.Timeout, "timeout", 30*time.Second, "bound of the whole run")
	bindConnFlags(f, &o.Conn)
	f.SetNormalizeFunc(tagAlias)
	return cmd
}

// consumeCommand wires `popshim consume`, the smoke-test POP consumer, to
// tools.Consume.
func consumeCommand() *cobra.Command {
	o := tools.NewConsumeOptions()
	cmd := &cobra.Command{
		Use:     "consume",
		Short:   "POP messages through the name server and ACK each one: a smoke test without Java",
		Example: "  popshim consume --namesrv 127.0.0.1:9876 --topic TopicTest --group G --count 10 --timeout 30s",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			if err := checkToolFlags(o.Topic, o.Group, o.Count, o.Timeout); err != nil {
				return err
			}
			if o.PollTime <= 0 || o.InvisibleTime <= 0 {
				return fmt.Errorf("--poll-time (%s) and --invisible-time (%s) must be positive", o.PollTime, o.InvisibleTime)
			}
			o.Out, o.Notes = cmd.OutOrStdout(), cmd.ErrOrStderr()
			_, err := tools.Consume(ctx, o)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Namesrv, "namesrv", "127.0.0.1:9876", "name server address host:port ('a:9876;b:9876' for several)")
	f.StringVar(&o.Topic, "topic", "TopicTest", "topic")
	f.StringVar(&o.Group, "group", "smoke_consumer", "consumer group (created on the first POP with --auto-create-subscription-group)")
	f.Int32Var(&o.QueueID, "queue-id", tools.AnyQueue, "queue to pop on every broker; -1 pops any queue")
	f.StringVar(&o.Tags, "tags", "*", "TAG filter expression, e.g. 'TagA || TagB'")
	f.IntVar(&o.Count, "count", 1, "messages to consume (pop and ack) before exiting 0")
	f.DurationVar(&o.Timeout, "timeout", 30*time.Second, "bound of the whole run; exits non-zero when --count was not reached")
	f.DurationVar(&o.PollTime, "poll-time", 5*time.Second, "long-poll time of one POP, positive")
	f.DurationVar(&o.InvisibleTime, "invisible-time", 60*time.Second, "how long a popped message stays invisible before redelivery unless acked")
	bindConnFlags(f, &o.Conn)
	f.SetNormalizeFunc(tagAlias)
	return cmd
}

// bindConnFlags adds the connection flags send and consume share: TLS for
// a broker started with --tls-cert, credentials for one started with
// --auth-enabled or --acl-file. The secret defaults to
// $POPSHIM_SECRET_KEY so that it need not appear in a process list.
func bindConnFlags(f *pflag.FlagSet, c *tools.ConnOptions) {
	f.BoolVar(&c.TLS, "tls", false, "speak TLS to the name server and brokers (certificate not verified unless --tls-ca)")
	f.StringVar(&c.TLSCA, "tls-ca", "", "PEM file of the CA to verify the broker's certificate with (implies --tls)")
	f.StringVar(&c.AccessKey, "access-key", "", "sign requests as this ACL user (AccessKey), for a broker with --auth-enabled or --acl-file")
	f.StringVar(&c.SecretKey, "secret-key", os.Getenv("POPSHIM_SECRET_KEY"), "SecretKey of --access-key (default $POPSHIM_SECRET_KEY)")
}

// checkToolFlags refuses command-line values the tools library would
// silently replace by its defaults (its zero values mean "default"): an
// empty --topic or --group, a --count below 1, a --timeout not positive.
func checkToolFlags(topic, group string, count int, timeout time.Duration) error {
	switch {
	case topic == "":
		return errors.New("--topic must not be empty")
	case group == "":
		return errors.New("--group must not be empty")
	case count < 1:
		return fmt.Errorf("--count must be at least 1, got %d", count)
	case timeout <= 0:
		return fmt.Errorf("--timeout must be positive, got %s", timeout)
	}
	return nil
}

// tagAlias lets --tag and --key stand for --tags and --keys, the singular
// the Java Message API uses.
func tagAlias(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	switch name {
	case "tag":
		name = "tags"
	case "key":
		name = "keys"
	}
	return pflag.NormalizedName(name)
}
