package format

import "testing"

func TestTableOfDir(t *testing.T) {
	for name, want := range map[string]string{
		"users-5bc52802de2535edaeab188eecebb090":      "users",
		"wide_rows2-00000000000000000000000000000000": "wide_rows2",
		"users-5bc52802de2535edaeab188eecebb09":       "", // 31 digits
		"users-5BC52802DE2535EDAEAB188EECEBB090":      "", // TableId.toHexString is lower case
		"users":                                       "",
		"my-table-5bc52802de2535edaeab188eecebb090":   "", // table names are word characters
		".idx": "",
	} {
		got, ok := TableOfDir(name)
		if got != want || ok != (want != "") {
			t.Errorf("TableOfDir(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}
