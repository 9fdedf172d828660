package dump_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/dump"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// expiring is one "expires_at" sstabledump prints, in output order:
// a row's liveness info or a cell.
type expiring struct {
	cell      bool
	expiresAt time.Time
	expired   bool
}

func expirings(t *testing.T, s *sstable.SSTable, now time.Time) []expiring {
	t.Helper()
	var out bytes.Buffer
	d := dump.NewDumper(&out, s, dump.Options{JSONLines: true, Workers: 1, Now: func() time.Time { return now }})
	d.Begin()
	if err := d.All(nil, nil); err != nil {
		t.Fatal(err)
	}
	d.End()
	var got []expiring
	var walk func(v any, cell bool)
	walk = func(v any, cell bool) {
		switch v := v.(type) {
		case map[string]any:
			if at, ok := v["expires_at"].(string); ok {
				tm, err := time.Parse(time.RFC3339, at)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, expiring{cell, tm, v["expired"] == true})
			}
			for k, x := range v {
				if k == "liveness_info" {
					walk(x, false)
				}
			}
			for _, k := range []string{"rows", "cells"} {
				if x, ok := v[k]; ok {
					walk(x, k == "cells")
				}
			}
		case []any:
			for _, x := range v {
				walk(x, cell)
			}
		}
	}
	for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatal(err)
		}
		walk(v, false)
	}
	return got
}

// The "expired" flags follow JsonTransformer at the second of expiry: a
// cell is expired once its local deletion time is not after now
// (!Cell.isLive(now)), a row's liveness info only once it is before now
// (localExpirationTime < now). Checked on every expiring row and cell of a
// generated flush history, with now at each expiry time in turn.
func TestExpiredFlagsAtTheSecondOfExpiry(t *testing.T) {
	p, err := workload.ParseProfile([]byte(generate.HistoryProfile), "history")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = 20
	res, err := generate.GenerateHistory(p, filepath.Join(t.TempDir(), "ks", "t-0123456789abcdef0123456789abcdef"), generate.HistoryOptions{SSTables: 3})
	if err != nil {
		t.Fatal(err)
	}
	cells, rows := 0, 0
	for _, path := range res.DataPaths {
		s, err := sstable.Open(path, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		times := map[time.Time]bool{}
		for _, e := range expirings(t, s, time.Unix(0, 0)) {
			times[e.expiresAt] = true
		}
		for now := range times {
			for _, e := range expirings(t, s, now) {
				want := e.expiresAt.Before(now)
				if e.cell {
					want = !e.expiresAt.After(now)
				}
				if e.expiresAt.Equal(now) {
					if e.cell {
						cells++
					} else {
						rows++
					}
				}
				if e.expired != want {
					t.Errorf("%s at %s: %s expiring at %s printed expired %v", path, now.Format(time.RFC3339), map[bool]string{true: "a cell", false: "a row"}[e.cell], e.expiresAt.Format(time.RFC3339), e.expired)
				}
			}
		}
		s.Close()
	}
	if cells == 0 || rows == 0 {
		t.Fatalf("%d cells and %d rows met now at their expiry: the test tells nothing", cells, rows)
	}
}
