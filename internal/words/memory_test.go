package words

import "testing"

// The wanted strings are what FBUtilities.prettyPrintMemory(size, " ")
// printed for these sizes on OpenJDK 17: the half-up ties (1088, 1536) and
// the sizes above 16 MiB that a float's 24 bits round across a digit
// (16842751 is 16.0624990 MiB; as a float it is 16.0625).
func TestPrettyMemory(t *testing.T) {
	for _, c := range []struct {
		in   int64
		want string
	}{
		{0, "0 B"}, {1, "1 B"}, {-1, "-1 B"}, {1023, "1023 B"}, {1024, "1.000 KiB"},
		{-1088, "-1.063 KiB"}, {1088, "1.063 KiB"}, {1535, "1.499 KiB"}, {1536, "1.500 KiB"},
		{67205, "65.630 KiB"}, {73457, "71.735 KiB"}, {1048575, "1023.999 KiB"}, {1048576, "1.000 MiB"},
		{16777215, "16.000 MiB"}, {16777216, "16.000 MiB"}, {16777217, "16.000 MiB"},
		{16842751, "16.063 MiB"}, {16842753, "16.063 MiB"}, {33554431, "32.000 MiB"},
		{1073741823, "1024.000 MiB"}, {1073741824, "1.000 GiB"}, {2147483647, "2.000 GiB"},
		{6120328396, "5.700 GiB"}, {1099511627775, "1024.000 GiB"}, {3848290697216, "3.500 TiB"},
		{9007199254740993, "8.000 PiB"}, {9223372036854775807, "8.000 EiB"}, {-9223372036854775808, "-8.000 EiB"},
	} {
		if got := PrettyMemory(c.in, " "); got != c.want {
			t.Errorf("PrettyMemory(%d, \" \") = %q, want %q", c.in, got, c.want)
		}
	}
	// memsim's reports print without a separator, as Cassandra's logs do.
	if got, want := PrettyMemory(1088, ""), "1.063KiB"; got != want {
		t.Errorf("PrettyMemory(1088, \"\") = %q, want %q", got, want)
	}
	if got, want := PrettyMemory(5, ""), "5B"; got != want {
		t.Errorf("PrettyMemory(5, \"\") = %q, want %q", got, want)
	}
}

// ToByteString: one decimal, half up, 1024-based units named kB, MB.
func TestToByteString(t *testing.T) {
	for in, want := range map[int64]string{
		0: "", 24: "24 B", 1024: "1.0 kB", 1075: "1.0 kB", 1076: "1.1 kB", 73457: "71.7 kB", 1 << 30: "1.0 GB",
	} {
		if got := ToByteString(in); got != want {
			t.Errorf("ToByteString(%d) = %q, want %q", in, got, want)
		}
	}
}
