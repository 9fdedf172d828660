package export

import (
	"strings"
	"testing"
)

// Every selection of datasets reads back from its names, which are what
// the command's --datasets offers and takes.
func TestDatasetsNamesRoundTrip(t *testing.T) {
	if got := strings.Join(All.Names(), ","); got != "partitions,cells,sstables" {
		t.Errorf("All.Names() = %s", got)
	}
	for d := Datasets(1); d <= All; d++ {
		back, err := ParseDatasets(strings.Join(d.Names(), ","))
		if err != nil || back != d {
			t.Errorf("ParseDatasets(%v) = %v, %v; want %v", d.Names(), back, err, d)
		}
	}
	if _, err := ParseDatasets("partitions,rows"); err == nil || !strings.Contains(err.Error(), `"rows"`) {
		t.Errorf("ParseDatasets(partitions,rows) = %v, want an error naming rows", err)
	}
}
