package format

import (
	"testing"
	"time"
)

// The id of Cassandra's DescriptorTest reads back as the same text, and
// its day count is a day in 2022 (the UUID epoch is 1582-10-15).
func TestUUIDGeneration(t *testing.T) {
	const id = "3g1m_0nuf_3vj5m2k1125165rxa7"
	tick, lsb, ok := ParseUUIDGeneration(id)
	if !ok || !IsUUIDGeneration(id) {
		t.Fatal("not parsed")
	}
	if got := UUIDGeneration(tick, lsb); got != id {
		t.Fatalf("round trip: %s", got)
	}
	epoch := time.Date(1582, 10, 15, 0, 0, 0, 0, time.UTC)
	day := epoch.AddDate(0, 0, int(tick/10_000_000/86_400))
	if day.Year() < 2021 || day.Year() > 2023 {
		t.Fatalf("id's day is %v", day)
	}
	// Short fields are zero-padded to their widths.
	if got := UUIDGeneration(10_000_000*86_400+5, 35); got != "0001_0000_00005000000000000z" {
		t.Fatalf("padding: %s", got)
	}
	for _, bad := range []string{"1", "3g1m_0nuf_3vj5m2k1125165rxa", "3g1m-0nuf_3vj5m2k1125165rxa7"} {
		if IsUUIDGeneration(bad) {
			t.Errorf("%s taken for a UUID id", bad)
		}
	}
}

func TestSequenceGeneration(t *testing.T) {
	for s, want := range map[string]int{"1": 1, "0": 0, "2147483647": 2147483647} {
		if n, ok := SequenceGeneration(s); !ok || n != want {
			t.Errorf("%s: %d %v", s, n, ok)
		}
	}
	for _, bad := range []string{"", "2147483648", "12345678901", "-1", "+1", "1a"} {
		if _, ok := SequenceGeneration(bad); ok {
			t.Errorf("%s accepted", bad)
		}
	}
}
