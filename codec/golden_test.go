package codec

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "regenerate the expect: sections (and hex layout) of testdata/codec golden files")

const goldenDir = "../testdata/codec"

// golden is one annotated hex file: '#' comments, "key: value" directives,
// "hex:" followed by a hex dump, "expect:" followed by the expected
// decoding, one line per fact.
type golden struct {
	head   []string          // comment and directive lines before hex:, kept on rewrite
	dir    map[string]string // directives
	data   []byte
	expect []string
}

func readGolden(t testing.TB, path string) golden {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g := golden{dir: map[string]string{}}
	var hexLines []string
	state := "head"
	for _, l := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
		switch {
		case l == "hex:":
			state = "hex"
		case l == "expect:":
			state = "expect"
		case state == "head":
			g.head = append(g.head, l)
			if k, v, ok := strings.Cut(l, ": "); ok && !strings.HasPrefix(l, "#") {
				g.dir[k] = v
			}
		case state == "hex":
			hexLines = append(hexLines, l)
		default:
			g.expect = append(g.expect, l)
		}
	}
	if g.data, err = parseHexDump(hexLines); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return g
}

// machinePath matches an absolute path of one machine (a home, work or
// temporary directory, a Windows drive); golden files name sources by
// repository-relative or upstream file names only.
var machinePath = regexp.MustCompile(`(?:^|[\s(\x60"'=])(?:/(?:work|home|Users|root|tmp|mnt|opt|srv|var)/|[A-Za-z]:\\)`)

// checkNoMachinePath returns an error naming the first line that holds a
// machine path.
func checkNoMachinePath(lines []string) error {
	for i, l := range lines {
		if machinePath.MatchString(l) {
			return fmt.Errorf("line %d holds a machine path: %q", i+1, l)
		}
	}
	return nil
}

// write regenerates the file from the kept head, the hex dump and expect;
// it refuses a head that holds a machine path.
func (g *golden) write(path string, expect []string) error {
	if err := checkNoMachinePath(g.head); err != nil {
		return fmt.Errorf("%s: not rewritten: %w", path, err)
	}
	lines := append(slices.Clone(g.head), "hex:")
	lines = append(lines, formatHexDump(g.data)...)
	lines = append(lines, "expect:")
	lines = append(lines, expect...)
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// TestGolden decodes every golden file, compares the description with its
// expect: section, and re-encodes the decoded value with popshim's encoders:
// "reencode: exact" must reproduce the reference bytes exactly,
// "ext-unordered" must match except for the order of ROCKETMQ ext entries.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.txt"))
	if err != nil || len(files) < 13 {
		t.Fatalf("want at least 13 golden files in %s, got %d (%v)", goldenDir, len(files), err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			g := readGolden(t, path)
			if err := checkNoMachinePath(g.head); err != nil {
				t.Errorf("%s: %v", path, err)
			}
			got, reenc := describeGolden(t, &g)
			if *rewrite {
				if err := g.write(path, got); err != nil {
					t.Fatal(err)
				}
			} else if !slices.Equal(got, g.expect) {
				t.Errorf("decoding differs from %s (run with -rewrite to regenerate)\n--- want\n%s\n--- got\n%s",
					path, strings.Join(g.expect, "\n"), strings.Join(got, "\n"))
			}
			switch g.dir["reencode"] {
			case "exact":
				requireSameBytes(t, "re-encoded "+filepath.Base(path), g.data, reenc)
			case "ext-unordered":
				a, errA := DecodeFrame(g.data)
				b, errB := DecodeFrame(reenc)
				if errA != nil || errB != nil || len(g.data) != len(reenc) || !reflect.DeepEqual(a, b) ||
					string(g.data[:8+21]) != string(reenc[:8+21]) {
					t.Errorf("re-encoding differs beyond ext order: %v %v\n%s\n%s", errA, errB,
						strings.Join(formatHexDump(g.data), "\n"), strings.Join(formatHexDump(reenc), "\n"))
				}
			case "decode-only":
			default:
				t.Fatalf("unknown reencode directive %q", g.dir["reencode"])
			}
		})
	}
}

// describeGolden returns the expected-decoding lines and popshim's
// re-encoding of the decoded value.
func describeGolden(t *testing.T, g *golden) ([]string, []byte) {
	t.Helper()
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	switch g.dir["kind"] {
	case "frame":
		n, err := PeekFrame(g.data, DefaultMaxFrame)
		if err != nil || n != len(g.data) {
			t.Fatalf("PeekFrame = %d, %v; want %d", n, err, len(g.data))
		}
		cmd, err := DecodeFrame(g.data)
		if err != nil {
			t.Fatalf("DecodeFrame: %v", err)
		}
		describeCommand(add, cmd)
		describeHeader(t, add, g.dir["header"], cmd)
		body, reBody := describeBody(t, g.dir["body"], cmd.Body)
		out = append(out, body...)
		if reBody != nil {
			requireSameBytes(t, "re-encoded body", cmd.Body, reBody)
		}
		if cmd.SerializeType == SerializeRocketMQ {
			return out, AppendFrameBinary(nil, cmd)
		}
		return out, AppendFrame(nil, cmd)
	case "records", "batch", "subgroup", "subgroup-table":
		lines, re := describeBody(t, g.dir["kind"], g.data)
		return append(out, lines...), re
	}
	t.Fatalf("unknown kind %q", g.dir["kind"])
	return nil, nil
}

func describeCommand(add func(string, ...any), c *Command) {
	name := RequestName(c.Code)
	if c.IsResponse() {
		name = ResponseName(c.Code)
	}
	st := map[byte]string{SerializeJSON: "JSON", SerializeRocketMQ: "ROCKETMQ"}[c.SerializeType]
	add("serializeType: %s", st)
	add("code: %d %s", c.Code, name)
	add("language: %s", c.Language)
	add("version: %d", c.Version)
	add("opaque: %d", c.Opaque)
	add("flag: %d response=%v oneway=%v", c.Flag, c.IsResponse(), c.IsOneway())
	add("remark: %q", c.Remark)
	ext := c.ExtMap()
	if ext == nil {
		add("extFields: absent")
	}
	for _, k := range slices.Sorted(maps.Keys(ext)) {
		add("ext %s: %q", k, ext[k])
	}
	add("body: %d bytes", len(c.Body))
}

func describeHeader(t *testing.T, add func(string, ...any), kind string, c *Command) {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatalf("header %s: %v", kind, err)
		}
	}
	switch kind {
	case "":
	case "ack-request":
		h, err := DecodeAckMessageRequest(c)
		must(err)
		add("AckMessageRequestHeader: %+v", h)
		e, err := ParseExtraInfo(h.ExtraInfo)
		must(err)
		add("ExtraInfo: ckQueueOffset %d popTime %d invisibleTime %d reviveQid %d retryFlag %s brokerName %s queueId %d queueOffset %d hasCommitLogOffset %v",
			e.CkQueueOffset, e.PopTime, e.InvisibleTime, e.ReviveQid, e.RetryFlag, e.BrokerName, e.QueueID, e.QueueOffset, e.HasCommitLogOffset)
		add("ExtraInfo real topic: %s", e.RealTopic(h.Topic, h.ConsumerGroup))
	case "pop-response":
		h, err := DecodePopMessageResponseHeader(c.ExtFields)
		must(err)
		add("PopMessageResponseHeader: %+v", h)
		so, err := ParseStartOffsetInfo(h.StartOffsetInfo)
		must(err)
		mo, err := ParseMsgOffsetInfo(h.MsgOffsetInfo)
		must(err)
		add("startOffsetInfo: %v", so)
		add("msgOffsetInfo: %v", mo)
	case "send-request":
		h, err := DecodeSendRequest(c)
		must(err)
		props := h.Properties
		h.Properties = "(below)"
		add("SendMessageRequestHeader: %+v", h)
		add("properties: %q = %v", props, DecodeProperties(props))
	case "send-response":
		h, err := DecodeSendMessageResponseHeader(c.ExtFields)
		must(err)
		add("SendMessageResponseHeader: %+v", h)
		host, off, err := DecodeOffsetMsgID(h.MsgID)
		must(err)
		add("offsetMsgId: storeHost %s physicalOffset %d", host, off)
	default:
		t.Fatalf("unknown header directive %q", kind)
	}
}
