package words

import "testing"

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{
		{1, "partition", "1 partition"},
		{0, "partition", "0 partitions"},
		{2, "table directory", "2 table directories"},
		{3, "key", "3 keys"},
		{1, "directory", "1 directory"},
		{2, "y", "2 ys"},
		{2, "day", "2 days"},
		{2, "match", "2 matches"},
		{1, "match", "1 match"},
		{3, "index", "3 indexes"},
		{2, "s", "2 ss"},
		{12345, "index entry", "12345 index entries"},
	} {
		if got := Plural(c.n, c.noun); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
	if got, want := PluralGrouped(int64(12345), "index entry"), "12,345 index entries"; got != want {
		t.Errorf("PluralGrouped = %q, want %q", got, want)
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[int64]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", -123: "-123", -1234: "-1,234", 67194: "67,194",
		1234567: "1,234,567", 1158317659: "1,158,317,659", -9223372036854775808: "-9,223,372,036,854,775,808",
	} {
		if got := Thousands(in); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", in, got, want)
		}
	}
}
