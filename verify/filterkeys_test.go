package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/format/filter"
)

// TestFilterMissingKeysNamed: with a byte of Filter.db's bitset cleared, the
// keys whose bits it held are each named with their Data.db position, the
// keys found by probing the damaged filter key by key (the check the sweep
// replaced), on the big format before na (byte-swapped words), after it, and
// BTI.
func TestFilterMissingKeysNamed(t *testing.T) {
	for _, tc := range []struct{ group, name, base string }{
		{"nc", "legacy_nc_clust", "nc-1-big-"},
		{"oa", "legacy_oa_clust", "oa-1-big-"},
		{"da", "legacy_da_clust", "da-1-bti-"},
	} {
		src := fixtures.Table(t, tc.group, tc.name)
		clean, err := os.ReadFile(filepath.Join(src, tc.base+"Filter.db"))
		if err != nil {
			t.Fatal(err)
		}
		s, err := sstable.Open(filepath.Join(src, tc.base+"Data.db"), sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		old := s.Version().HasOldBloomFilterFormat
		type key struct {
			k   []byte
			off int64
		}
		var keys []key
		if err := s.ScanPartitions(sstable.ScanOptions{SkipCells: true}, func(p *sstable.PartitionSummary) error {
			keys = append(keys, key{slices.Clone(p.Key), p.Offset})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		named := 0
		for i := 8; i < len(clean); i++ {
			b := slices.Clone(clean)
			b[i] = 0
			bf, err := filter.Decode(b, old)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, k := range keys {
				if !bf.MightContain(k.k) {
					want = append(want, fmt.Sprintf("bloom filter does not contain key %x (partition at Data.db byte %d)", k.k, k.off))
				}
			}
			dir := fixtures.CopyTable(t, src)
			path := filepath.Join(dir, tc.base+"Filter.db")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			r := SSTable(filepath.Join(dir, tc.base+"Data.db"), sstable.Options{}, nil)
			var got []string
			for _, p := range r.Problems {
				if strings.HasPrefix(p.Message, "bloom filter does not contain") {
					if p.File != path || p.Component != "Filter.db" || p.Offset != -1 {
						t.Errorf("%s byte %d: problem %+v", tc.name, i, p)
					}
					got = append(got, p.Message)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, Filter.db byte %d cleared: named\n%q\nwant\n%q", tc.name, i, got, want)
			}
			named += len(want)
		}
		if named == 0 {
			t.Errorf("%s: no cleared byte made a key absent; the test checks nothing", tc.name)
		}
	}
}

// TestSSTableWrittenFilter: the writer's filter of the keys stands for the
// filter rebuilt from Data.db's keys. The same filter as Filter.db passes;
// Filter.db with a byte cleared names the same keys as SSTable does; a
// writer's filter holding a key Data.db lacks is a problem; and one of
// another capacity is ignored (the keys are rebuilt).
func TestSSTableWrittenFilter(t *testing.T) {
	for _, tc := range []struct{ group, name, base string }{
		{"nc", "legacy_nc_clust", "nc-1-big-"},
		{"oa", "legacy_oa_clust", "oa-1-big-"},
		{"da", "legacy_da_clust", "da-1-bti-"},
	} {
		src := fixtures.Table(t, tc.group, tc.name)
		data := filepath.Join(src, tc.base+"Data.db")
		s, err := sstable.Open(data, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		old := s.Version().HasOldBloomFilterFormat
		s.Close()
		clean, err := os.ReadFile(filepath.Join(src, tc.base+"Filter.db"))
		if err != nil {
			t.Fatal(err)
		}
		written := func() *filter.BloomFilter {
			bf, err := filter.Decode(clean, old)
			if err != nil {
				t.Fatal(err)
			}
			return bf
		}
		r := SSTableWritten(data, sstable.Options{}, Written{Keys: written()})
		if !r.OK() || !slices.Contains(r.Checks, "Filter.db against the filter of the keys written") {
			t.Errorf("%s: the writer's own filter: problems %v, checks %v", tc.name, r.Problems, r.Checks)
		}

		// A key Data.db does not hold, whose bits are not all set already.
		extra := written()
		for i := 0; ; i++ {
			k := fmt.Appendf(nil, "not-a-key-%d", i)
			if !extra.MightContain(k) {
				extra.Add(k)
				break
			}
		}
		r = SSTableWritten(data, sstable.Options{}, Written{Keys: extra})
		if r.OK() || !strings.Contains(r.Problems[0].Message, "of the filter of the keys written are clear") {
			t.Errorf("%s: a filter of one key more: problems %v", tc.name, r.Problems)
		}

		other, err := filter.New(1000, 0.001)
		if err != nil {
			t.Fatal(err)
		}
		r = SSTableWritten(data, sstable.Options{}, Written{Keys: other})
		if !r.OK() || !slices.Contains(r.Checks, "Filter.db rebuilt from the keys") {
			t.Errorf("%s: a filter of another capacity: problems %v, checks %v", tc.name, r.Problems, r.Checks)
		}

		named := 0
		for i := 8; i < len(clean); i += 3 {
			b := slices.Clone(clean)
			b[i] = 0
			dir := fixtures.CopyTable(t, src)
			if err := os.WriteFile(filepath.Join(dir, tc.base+"Filter.db"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			damaged := filepath.Join(dir, tc.base+"Data.db")
			want := SSTable(damaged, sstable.Options{}, nil).Problems
			got := SSTableWritten(damaged, sstable.Options{}, Written{Keys: written()}).Problems
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, Filter.db byte %d cleared: SSTableWritten\n%v\nSSTable\n%v", tc.name, i, got, want)
			}
			named += len(want)
		}
		if named == 0 {
			t.Errorf("%s: no cleared byte was found; the test checks nothing", tc.name)
		}
	}
}
