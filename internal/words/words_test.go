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
	} {
		if got := Plural(c.n, c.noun); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}
