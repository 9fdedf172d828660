package inspect

import (
	"math"
	"testing"
)

// DurationWords is commons-lang's formatDurationWords(ms, true, true),
// quirks included: a leading "0 seconds" is never dropped.
func TestDurationWords(t *testing.T) {
	for in, want := range map[int64]string{
		0: "", math.MaxInt32: "never", 1: "1 second", 59: "59 seconds", 60: "1 minute", 3600: "1 hour",
		86400: "1 day", 90061: "1 day 1 hour 1 minute 1 second", 86460: "1 day 0 hours 1 minute",
		7200 + 30*60: "2 hours 30 minutes", 604800: "7 days",
	} {
		if got := DurationWords(in); got != want {
			t.Errorf("DurationWords(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestDurationString(t *testing.T) {
	if got, want := DurationString(161_001_001+3*86_400_000_000), "Days: 3 Hours: 0 Minutes: 2 Seconds: 41"; got != want {
		t.Errorf("DurationString = %q, want %q", got, want)
	}
}

func TestJavaDouble(t *testing.T) {
	for in, want := range map[float64]string{
		0: "0.0", 1: "1.0", 0.01: "0.01", 0.6271186440677966: "0.6271186440677966", 0.4: "0.4",
		1e-4: "1.0E-4", 1.5e7: "1.5E7", 12345.5: "12345.5", math.NaN(): "NaN",
	} {
		if got := JavaDouble(in); got != want {
			t.Errorf("JavaDouble(%v) = %q, want %q", in, got, want)
		}
	}
}
