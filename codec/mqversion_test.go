package codec

import "testing"

func TestVersionName(t *testing.T) {
	for v, want := range map[int32]string{0: "V3_0_0_SNAPSHOT", 15: "V3_0_0_FINAL", 212: "V4_0_0_SNAPSHOT",
		413: "V5_0_0", 479: "V5_3_3", 513: "V5_5_0", 612: "HIGHER_VERSION", 9999: "HIGHER_VERSION", -1: "-1"} {
		if got := VersionName(v); got != want {
			t.Errorf("VersionName(%d) = %s, want %s", v, got, want)
		}
	}
	if VersionName(CurrentVersion) != "V5_3_3" {
		t.Errorf("CurrentVersion %d is %s", CurrentVersion, VersionName(CurrentVersion))
	}
}
