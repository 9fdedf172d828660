package scrub

import "testing"

// Every mode reads back from its name, which is what scrub --mode offers
// and takes.
func TestModesRoundTrip(t *testing.T) {
	if len(Modes()) != 3 {
		t.Errorf("Modes() = %v", Modes())
	}
	for _, m := range Modes() {
		if back, err := ParseMode(m.String()); err != nil || back != m {
			t.Errorf("ParseMode(%q) = %v, %v", m, back, err)
		}
	}
	if _, err := ParseMode("repair"); err == nil {
		t.Error("ParseMode accepted repair")
	}
}
