package broker_test

import (
	"testing"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
)

func updateGroups(t *testing.T, f *brokertest.Fixture, cs ...codec.SubscriptionGroupConfig) error {
	t.Helper()
	return brokertest.Await0(t, func(done func(error)) {
		f.Broker.UpdateSubscriptionGroups(broker.UpdateSubscriptionGroupsRequest{Configs: cs}, done)
	})
}

func deleteGroups(t *testing.T, f *brokertest.Fixture, cleanOffset bool, names ...string) error {
	t.Helper()
	return brokertest.Await0(t, func(done func(error)) {
		f.Broker.DeleteSubscriptionGroups(broker.DeleteSubscriptionGroupsRequest{Groups: names, CleanOffset: cleanOffset}, done)
	})
}

// TestCoreSubscriptionGroupCreateDelete: created and replaced groups
// survive a restart with their values; deleted ones stay deleted across a
// restart (auto-creation off, so nothing brings them back).
func TestCoreSubscriptionGroupCreateDelete(t *testing.T) {
	cfg := brokertest.Config(t.TempDir())
	cfg.AutoCreateSubscriptionGroup = false
	f := brokertest.Start(t, cfg, nil)
	g1 := codec.NewSubscriptionGroupConfig("GroupS1")
	g1.ConsumeEnable, g1.RetryMaxTimes = false, 3
	g1.Attributes = map[string]string{"+priority.factor": "5"}
	g2 := codec.NewSubscriptionGroupConfig("GroupS2")
	if err := updateGroups(t, f, g1, g2); err != nil {
		t.Fatalf("create: %v", err)
	}
	f.Restart()
	got, ok := f.Broker.Groups.Get("GroupS1")
	if !ok || got.ConsumeEnable || got.RetryMaxTimes != 3 || got.Attributes["priority.factor"] != "5" {
		t.Fatalf("GroupS1 after restart %+v %v", got, ok)
	}
	if _, ok := f.Broker.Groups.Get("GroupS2"); !ok {
		t.Fatal("GroupS2 lost in restart")
	}
	if err := updateGroups(t, f); err != nil {
		t.Fatalf("empty update: %v", err)
	}

	if err := deleteGroups(t, f, true, "GroupS1", "NeverThere"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	f.Restart()
	if _, ok := f.Broker.Groups.Get("GroupS1"); ok {
		t.Fatal("GroupS1 back after restart")
	}
	if _, ok := f.Broker.Groups.Get("GroupS2"); !ok {
		t.Fatal("GroupS2 deleted with GroupS1")
	}
}

// TestCoreSubscriptionGroupRefusals: an illegal name refuses the whole
// request with Java's remark and writes nothing; a refused attribute
// operation fails the write with SYSTEM_ERROR; an empty delete list is
// INVALID_PARAMETER.
func TestCoreSubscriptionGroupRefusals(t *testing.T) {
	cfg := brokertest.Config(t.TempDir())
	cfg.AutoCreateSubscriptionGroup = false
	f := brokertest.Start(t, cfg, nil)

	err := updateGroups(t, f, codec.NewSubscriptionGroupConfig("GroupOK"), codec.NewSubscriptionGroupConfig("bad group!"))
	if e := wantCode(t, err, codec.InvalidParameter); e.Remark !=
		"The specified group: bad group!, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$" {
		t.Fatalf("remark %q", e.Remark)
	}
	if e := wantCode(t, updateGroups(t, f, codec.NewSubscriptionGroupConfig(" ")), codec.InvalidParameter); e.Remark != "The specified group is blank." {
		t.Fatalf("remark %q", e.Remark)
	}
	if _, ok := f.Broker.Groups.Get("GroupOK"); ok {
		t.Fatal("a refused list created its valid group")
	}

	g := codec.NewSubscriptionGroupConfig("GroupAttr")
	g.Attributes = map[string]string{"-priority.factor": ""}
	_ = wantCode(t, updateGroups(t, f, g), codec.SystemError)
	if _, ok := f.Broker.Groups.Get("GroupAttr"); ok {
		t.Fatal("a failed attribute merge created the group")
	}

	if e := wantCode(t, deleteGroups(t, f, false), codec.InvalidParameter); e.Remark != "groupNameList is empty" {
		t.Fatalf("remark %q", e.Remark)
	}
}
