package merge_test

// An independent reconciliation of a table's sstables, written from
// their ordinary dump JSON (sstabledump's format, -t timestamps) with
// Cassandra's rules applied by hand, to hold the merge engine to. It
// shares no code with the engine: it reads what dump prints, keeps rows
// in maps keyed by their printed clustering, and merges range tombstones
// by sweeping their bounds rather than as RangeTombstoneMarker.Merger
// does.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/dump"
	"github.com/sstabletool/sstabletool/merge"
)

// The dump's JSON, as -t -l print it.
type (
	jPartition struct {
		TableKind string `json:"table kind"`
		Partition struct {
			Key      []string   `json:"key"`
			Position int64      `json:"position"`
			Deletion *jDeletion `json:"deletion_info,omitempty"`
		} `json:"partition"`
		Rows []jRow `json:"rows"`
	}
	jDeletion struct {
		MarkedDeleted   string `json:"marked_deleted,omitempty"`
		LocalDeleteTime string `json:"local_delete_time"`
	}
	jRow struct {
		Type       string            `json:"type"`
		Position   int64             `json:"position"`
		Clustering []json.RawMessage `json:"clustering,omitempty"`
		Liveness   *jLiveness        `json:"liveness_info,omitempty"`
		Deletion   *jDeletion        `json:"deletion_info,omitempty"`
		Cells      []jCell           `json:"cells,omitempty"`
		Start      *jBound           `json:"start,omitempty"`
		End        *jBound           `json:"end,omitempty"`
	}
	jLiveness struct {
		Tstamp    string  `json:"tstamp"`
		TTL       *int64  `json:"ttl,omitempty"`
		ExpiresAt *string `json:"expires_at,omitempty"`
		Expired   *bool   `json:"expired,omitempty"`
	}
	jCell struct {
		Name      string            `json:"name"`
		Path      []json.RawMessage `json:"path,omitempty"`
		Value     json.RawMessage   `json:"value,omitempty"`
		Tstamp    *string           `json:"tstamp,omitempty"`
		TTL       *int64            `json:"ttl,omitempty"`
		ExpiresAt *string           `json:"expires_at,omitempty"`
		Expired   *bool             `json:"expired,omitempty"`
		Deletion  *jDeletion        `json:"deletion_info,omitempty"`
	}
	jBound struct {
		Type       string            `json:"type"`
		Clustering []json.RawMessage `json:"clustering,omitempty"`
		Deletion   jDeletion         `json:"deletion_info"`
	}
)

func parseDump(t *testing.T, b []byte) []jPartition {
	t.Helper()
	var out []jPartition
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var p jPartition
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("dump line %q: %v", sc.Text(), err)
		}
		out = append(out, p)
	}
	return out
}

var dumpOptions = func(now int64) dump.Options {
	return dump.Options{JSONLines: true, RawTimestamps: true, Workers: 1, Now: func() time.Time { return time.Unix(now, 0) }}
}

// dumpEach is each sstable's ordinary dump.
func dumpEach(t *testing.T, paths []string, now int64) [][]jPartition {
	t.Helper()
	var out [][]jPartition
	for _, p := range paths {
		s, err := sstable.Open(p, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		d := dump.NewDumper(&buf, s, dumpOptions(now))
		d.Begin()
		if err := d.All(nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := d.End(); err != nil {
			t.Fatal(err)
		}
		s.Close()
		out = append(out, parseDump(t, buf.Bytes()))
	}
	return out
}

// dumpMerged is what dump --merge prints.
func dumpMerged(t *testing.T, tbl *merge.Table, o merge.Options) []jPartition {
	t.Helper()
	var buf bytes.Buffer
	d := dump.NewTableDumper(&buf, tbl, dumpOptions(o.Now))
	d.Begin()
	sc, err := tbl.Scan(o)
	if err != nil {
		t.Fatal(err)
	}
	for {
		p, err := sc.Next()
		if err != nil {
			t.Fatal(err)
		}
		if p == nil {
			break
		}
		if err := d.PartitionFrom(&p.Header, partRows{p}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
	return parseDump(t, buf.Bytes())
}

type partRows struct{ p *merge.Partition }

func (r partRows) Next(bool) (*rows.Unfiltered, error) { return r.p.Next() }

// ---- the reconciler's model ----

type del struct{ mfda, ldt int64 }

var live = del{math.MinInt64, math.MaxInt64}

func (d del) isLive() bool { return d == live }

// supersedes is DeletionTime.supersedes.
func (d del) supersedes(o del) bool { return d.mfda > o.mfda || d.mfda == o.mfda && d.ldt > o.ldt }

func maxDel(a, b del) del {
	if b.supersedes(a) {
		return b
	}
	return a
}

type rLive struct {
	ts, ttl, exp int64 // ttl 0: not expiring
}

type rCell struct {
	name    string
	path    []json.RawMessage
	value   json.RawMessage
	ts      int64
	tomb    bool
	ttl     int64
	ldt     int64 // tombstone: local deletion time; expiring: expiration
	cdel    bool  // a complex (collection) deletion, not a cell
	cdelDel del
	src     int
}

func (c *rCell) id() string {
	s := c.name + "\x00"
	for _, p := range c.path {
		s += string(p) + "\x00"
	}
	return s
}

type rRow struct {
	static     bool
	clustering []json.RawMessage
	live       *rLive
	del        del
	cells      []rCell // cells and collection deletions, in printed order
	src        int
}

type rBound struct {
	values []json.RawMessage
	side   int // -1: before the clustering it names (incl start, excl end); +1 after
}

type rInterval struct {
	start, end rBound
	dt         del
}

type rPartition struct {
	key       []string
	del       del
	static    *rRow
	rows      []*rRow
	intervals []rInterval // this sstable's range tombstones
	markers   int
	src       int
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

func parseDel(t *testing.T, d *jDeletion) del {
	if d == nil {
		return live
	}
	return del{mustInt(t, d.MarkedDeleted), mustInt(t, d.LocalDeleteTime)}
}

// fromDump reads one sstable's partition into the model, filling in what
// the dump leaves out (a cell's timestamp and TTL when they are its row's).
func fromDump(t *testing.T, src int, p *jPartition) *rPartition {
	rp := &rPartition{key: p.Partition.Key, del: parseDel(t, p.Partition.Deletion), src: src}
	var open *rInterval
	for _, jr := range p.Rows {
		switch jr.Type {
		case "range_tombstone_bound", "range_tombstone_boundary":
			rp.markers++
			if jr.End != nil {
				if open == nil {
					t.Fatalf("sstable %d, partition %v: a range closes that is not open", src, rp.key)
				}
				open.end = boundOf(jr.End, false)
				rp.intervals = append(rp.intervals, *open)
				open = nil
			}
			if jr.Start != nil {
				open = &rInterval{start: boundOf(jr.Start, true), dt: parseDel(t, &jr.Start.Deletion)}
			}
			continue
		}
		r := &rRow{static: jr.Type == "static_block", clustering: jr.Clustering, del: parseDel(t, jr.Deletion), src: src}
		if l := jr.Liveness; l != nil {
			r.live = &rLive{ts: mustInt(t, l.Tstamp)}
			if l.TTL != nil {
				r.live.ttl, r.live.exp = *l.TTL, mustInt(t, *l.ExpiresAt)
			}
		}
		for _, jc := range jr.Cells {
			c := rCell{name: jc.Name, path: jc.Path, value: jc.Value, src: src}
			if jc.Deletion != nil && jc.Deletion.MarkedDeleted != "" {
				c.cdel, c.cdelDel = true, parseDel(t, jc.Deletion)
				r.cells = append(r.cells, c)
				continue
			}
			switch {
			case jc.Tstamp != nil:
				c.ts = mustInt(t, *jc.Tstamp)
			case r.live != nil:
				c.ts = r.live.ts
			default:
				t.Fatalf("cell %s without a timestamp in a row without liveness", jc.Name)
			}
			switch {
			case jc.Deletion != nil:
				c.tomb, c.ldt = true, mustInt(t, jc.Deletion.LocalDeleteTime)
				c.value = nil
			case jc.TTL != nil:
				c.ttl, c.ldt = *jc.TTL, mustInt(t, *jc.ExpiresAt)
			case r.live != nil && r.live.ttl != 0:
				// The dump leaves out a TTL equal to the row's: a cell of the
				// row's own write (same timestamp) has its expiration too.
				if jc.Tstamp != nil {
					t.Fatalf("cell %s: ambiguous TTL (the dump leaves it out when it is the row's)", jc.Name)
				}
				c.ttl, c.ldt = r.live.ttl, r.live.exp
			}
			r.cells = append(r.cells, c)
		}
		if r.static {
			rp.static = r
		} else {
			rp.rows = append(rp.rows, r)
		}
	}
	if open != nil {
		t.Fatalf("sstable %d, partition %v: a range is never closed", src, rp.key)
	}
	return rp
}

func boundOf(b *jBound, start bool) rBound {
	incl := b.Type == "inclusive"
	side := 1
	if start == incl {
		side = -1 // an inclusive start or an exclusive end sits before its clustering
	}
	return rBound{values: b.Clustering, side: side}
}

// compareValues orders two printed clustering values: numbers as numbers,
// strings as their bytes (the tables tested have int, bigint and text
// clustering columns).
func compareValue(a, b json.RawMessage) int {
	if len(a) > 0 && a[0] == '"' {
		var x, y string
		json.Unmarshal(a, &x)
		json.Unmarshal(b, &y)
		return strings.Compare(x, y)
	}
	x, _ := strconv.ParseFloat(string(a), 64)
	y, _ := strconv.ParseFloat(string(b), 64)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// comparePos orders positions on the clustering axis: a row is side 0; a
// "*" value is a bound's shorter prefix.
func comparePos(av []json.RawMessage, as int, bv []json.RawMessage, bs int) int {
	trim := func(v []json.RawMessage) []json.RawMessage {
		for i, x := range v {
			if string(x) == `"*"` {
				return v[:i]
			}
		}
		return v
	}
	av, bv = trim(av), trim(bv)
	n := min(len(av), len(bv))
	for i := 0; i < n; i++ {
		if c := compareValue(av[i], bv[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(av) == len(bv):
		return as - bs
	case len(av) < len(bv):
		return as // a shorter bound sits before or after every clustering it prefixes
	}
	return -bs
}

// covers says whether a range deletion covers a row's clustering.
func (iv rInterval) covers(c []json.RawMessage) bool {
	return comparePos(iv.start.values, iv.start.side, c, 0) < 0 && comparePos(c, 0, iv.end.values, iv.end.side) < 0
}

// beats is Cells.reconcile's order for two regular cells: does a win
// over b (a on a full tie)?
func (rc *reconciler) beats(a, b *rCell) bool {
	if a.ts != b.ts {
		return a.ts > b.ts
	}
	ad, bd := a.tomb || a.ttl != 0, b.tomb || b.ttl != 0
	if ad != bd {
		return ad
	}
	if ad {
		if a.tomb != b.tomb {
			return a.tomb
		}
		if a.ldt != b.ldt {
			return a.ldt > b.ldt
		}
	}
	return bytes.Compare(rc.valueBytes(a), rc.valueBytes(b)) >= 0
}

// valueBytes is a simple cell's value as stored, for the tie on values.
func (rc *reconciler) valueBytes(c *rCell) []byte {
	switch rc.types[c.name] {
	case "text", "ascii", "varchar":
		var s string
		if err := json.Unmarshal(c.value, &s); err != nil {
			rc.t.Fatalf("cell %s: %v", c.name, err)
		}
		return []byte(s)
	case "int":
		n, _ := strconv.ParseInt(string(c.value), 10, 32)
		return binary.BigEndian.AppendUint32(nil, uint32(n))
	case "bigint":
		n, _ := strconv.ParseInt(string(c.value), 10, 64)
		return binary.BigEndian.AppendUint64(nil, uint64(n))
	case "":
		return nil // a tombstone
	}
	rc.t.Fatalf("a tie on a value of %s %s: the reconciler does not order that type", c.name, rc.types[c.name])
	return nil
}

type reconciler struct {
	t        *testing.T
	now      int64
	purge    bool
	gcBefore int64
	types    map[string]string // simple columns' CQL types
	order    map[string]int    // columns in Cassandra's order
	// counter merges a counter cell's versions; nil for tables without.
	counter func(key []string, clustering []json.RawMessage, versions []rCell) rCell
}

func (rc *reconciler) shouldPurge(ldt int64) bool { return rc.purge && ldt < rc.gcBefore }

// partition merges the versions of one partition (oldest sstable first).
func (rc *reconciler) partition(vs []*rPartition) *jPartition {
	pd := live
	for _, v := range vs {
		pd = maxDel(pd, v.del)
	}
	var static *rRow
	var rowsOut []*rRow
	var markers []jRow
	if len(vs) == 1 {
		// A partition of one sstable is written as it is (only its static
		// row meets the partition deletion).
		v := vs[0]
		if v.static != nil {
			static = rc.row([]*rRow{v.static}, pd, v.key)
		}
		rowsOut = v.rows
		markers = v.ownMarkers()
	} else {
		var statics []*rRow
		for _, v := range vs {
			if v.static != nil {
				statics = append(statics, v.static)
			}
		}
		if len(statics) > 0 {
			statics = append(statics, make([]*rRow, len(vs)-len(statics))...) // every version merges
			static = rc.row(statics, pd, vs[0].key)
		}
		byClust := map[string][]*rRow{}
		var clusts [][]json.RawMessage
		for _, v := range vs {
			for _, r := range v.rows {
				k := key(r.clustering)
				if byClust[k] == nil {
					clusts = append(clusts, r.clustering)
				}
				byClust[k] = append(byClust[k], r)
			}
		}
		slices.SortFunc(clusts, func(a, b []json.RawMessage) int { return comparePos(a, 0, b, 0) })
		for _, c := range clusts {
			active := pd
			for _, v := range vs {
				for _, iv := range v.intervals {
					if iv.covers(c) {
						active = maxDel(active, iv.dt)
					}
				}
			}
			if r := rc.row(byClust[key(c)], active, vs[0].key); r != nil {
				rowsOut = append(rowsOut, r)
			}
		}
		markers = rc.sweep(vs, pd)
	}
	// The compaction's purge (PurgeFunction), then what is left.
	out := &jPartition{TableKind: "REGULAR"}
	out.Partition.Key = vs[0].key
	if !pd.isLive() && !rc.shouldPurge(pd.ldt) {
		out.Partition.Deletion = jDel(pd)
	}
	if static != nil {
		if j, ok := rc.purgeRow(static); ok {
			out.Rows = append(out.Rows, j)
		}
	}
	// Rows and markers in clustering order.
	var items []jRow
	for _, r := range rowsOut {
		if j, ok := rc.purgeRow(r); ok {
			items = append(items, j)
		}
	}
	for _, m := range markers {
		if j, ok := rc.purgeMarker(m); ok {
			items = append(items, j)
		}
	}
	slices.SortStableFunc(items, func(a, b jRow) int {
		av, as := itemPos(&a)
		bv, bs := itemPos(&b)
		return comparePos(av, as, bv, bs)
	})
	out.Rows = append(out.Rows, items...)
	if out.Partition.Deletion == nil && len(out.Rows) == 0 {
		return nil
	}
	if out.Rows == nil {
		out.Rows = []jRow{}
	}
	return out
}

func itemPos(j *jRow) ([]json.RawMessage, int) {
	switch {
	case j.Type == "row":
		return j.Clustering, 0
	case j.Start != nil && j.End != nil:
		b := boundOf(j.End, false)
		return b.values, b.side
	case j.Start != nil:
		b := boundOf(j.Start, true)
		return b.values, b.side
	}
	b := boundOf(j.End, false)
	return b.values, b.side
}

func key[T any](v T) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func jDel(d del) *jDeletion {
	return &jDeletion{MarkedDeleted: strconv.FormatInt(d.mfda, 10), LocalDeleteTime: strconv.FormatInt(d.ldt, 10)}
}

// ownMarkers are a single sstable's markers as it holds them.
func (p *rPartition) ownMarkers() []jRow {
	var out []jRow
	for i, iv := range p.intervals {
		if i > 0 && p.intervals[i-1].end.side == iv.start.side && key(p.intervals[i-1].end.values) == key(iv.start.values) {
			out[len(out)-1] = boundary(rBound{iv.start.values, iv.start.side}, p.intervals[i-1].dt, iv.dt)
		} else {
			out = append(out, bound(iv.start, iv.dt, true))
		}
		out = append(out, bound(iv.end, iv.dt, false))
	}
	return out
}

// sweep merges every sstable's range deletions: at each bound, the largest
// deletion open just after it, if it supersedes the partition deletion;
// a marker wherever that changes.
func (rc *reconciler) sweep(vs []*rPartition, pd del) []jRow {
	var points []rBound
	for _, v := range vs {
		for _, iv := range v.intervals {
			points = append(points, iv.start, iv.end)
		}
	}
	slices.SortFunc(points, func(a, b rBound) int { return comparePos(a.values, a.side, b.values, b.side) })
	points = slices.CompactFunc(points, func(a, b rBound) bool { return comparePos(a.values, a.side, b.values, b.side) == 0 })
	var out []jRow
	open := live
	for _, p := range points {
		now := live
		for _, v := range vs {
			for _, iv := range v.intervals {
				if comparePos(iv.start.values, iv.start.side, p.values, p.side) <= 0 && comparePos(p.values, p.side, iv.end.values, iv.end.side) < 0 {
					now = maxDel(now, iv.dt)
				}
			}
		}
		if !now.supersedes(pd) {
			now = live
		}
		switch {
		case now == open:
			continue
		case open.isLive():
			out = append(out, bound(p, now, true))
		case now.isLive():
			out = append(out, bound(p, open, false))
		default:
			out = append(out, boundary(p, open, now))
		}
		open = now
	}
	return out
}

func bound(b rBound, d del, start bool) jRow {
	incl := (b.side < 0) == start
	jb := &jBound{Type: map[bool]string{true: "inclusive", false: "exclusive"}[incl], Clustering: b.values, Deletion: *jDel(d)}
	if start {
		return jRow{Type: "range_tombstone_bound", Start: jb}
	}
	return jRow{Type: "range_tombstone_bound", End: jb}
}

func boundary(b rBound, closing, opening del) jRow {
	startIncl := b.side < 0
	return jRow{Type: "range_tombstone_boundary",
		Start: &jBound{Type: map[bool]string{true: "inclusive", false: "exclusive"}[startIncl], Clustering: b.values, Deletion: *jDel(opening)},
		End:   &jBound{Type: map[bool]string{true: "inclusive", false: "exclusive"}[!startIncl], Clustering: b.values, Deletion: *jDel(closing)}}
}

// row merges the versions of one row under the deletion in force (nil
// versions are sstables without it, which count as versions).
func (rc *reconciler) row(vs []*rRow, active del, pkey []string) *rRow {
	n := 0
	var only *rRow
	for _, v := range vs {
		if v != nil {
			n++
			only = v
		}
	}
	if n == 0 {
		return nil
	}
	if len(vs) == 1 && active.isLive() {
		return only // one version and nothing to shadow it: as it is
	}
	out := &rRow{static: only.static, clustering: only.clustering, del: live}
	rowDel := live
	var lv *rLive
	for _, v := range vs {
		if v == nil {
			continue
		}
		rowDel = maxDel(rowDel, v.del)
		if v.live != nil && (lv == nil || livenessBeats(v.live, lv)) {
			lv = v.live
		}
	}
	if rowDel.supersedes(active) {
		active, out.del = rowDel, rowDel
	}
	if lv != nil && lv.ts > active.mfda {
		out.live = lv
	}
	// Collection deletions, then cells, by column and path.
	cdel := map[string]del{}
	groups := map[string][]rCell{}
	var ids []string
	for _, v := range vs {
		if v == nil {
			continue
		}
		for _, c := range v.cells {
			if c.cdel {
				d, ok := cdel[c.name]
				if !ok {
					d = live
				}
				cdel[c.name] = maxDel(d, c.cdelDel)
				continue
			}
			if groups[c.id()] == nil {
				ids = append(ids, c.id())
			}
			groups[c.id()] = append(groups[c.id()], c)
		}
	}
	for name, d := range cdel {
		if d.supersedes(active) {
			out.cells = append(out.cells, rCell{name: name, cdel: true, cdelDel: d})
		}
	}
	for _, id := range ids {
		g := groups[id]
		shadow := active
		if d, ok := cdel[g[0].name]; ok && len(g[0].path) > 0 && d.supersedes(active) {
			shadow = d
		}
		var kept []rCell
		for _, c := range g {
			if c.ts > shadow.mfda {
				kept = append(kept, c)
			}
		}
		if len(kept) == 0 {
			continue
		}
		if rc.counter != nil && rc.types[kept[0].name] == "counter" && (len(kept) > 1 || !kept[0].tomb) {
			out.cells = append(out.cells, rc.counter(pkey, only.clustering, kept))
			continue
		}
		w := kept[0]
		for _, c := range kept[1:] {
			if !rc.beats(&w, &c) {
				w = c
			}
		}
		out.cells = append(out.cells, w)
	}
	if out.live == nil && out.del.isLive() && len(out.cells) == 0 {
		return nil
	}
	return out
}

// livenessBeats is LivenessInfo.supersedes.
func livenessBeats(a, b *rLive) bool {
	if a.ts != b.ts {
		return a.ts > b.ts
	}
	if (a.ttl != 0) == (b.ttl != 0) {
		exp := func(l *rLive) int64 {
			if l.ttl == 0 {
				return math.MaxInt64
			}
			return l.exp
		}
		return exp(a) > exp(b)
	}
	return a.ttl != 0
}

// purgeRow applies the compaction's purge to a merged row and prints it as
// dump does; false when nothing of it is left.
func (rc *reconciler) purgeRow(r *rRow) (jRow, bool) {
	j := jRow{Type: "row", Clustering: r.clustering}
	if r.static {
		j.Type, j.Clustering = "static_block", nil
	}
	lv := r.live
	if lv != nil && lv.ttl != 0 && rc.now >= lv.exp && rc.shouldPurge(lv.exp) {
		lv = nil
	}
	if lv != nil {
		j.Liveness = &jLiveness{Tstamp: strconv.FormatInt(lv.ts, 10)}
		if lv.ttl != 0 {
			exp, expired := strconv.FormatInt(lv.exp, 10), lv.exp < rc.now
			j.Liveness.TTL, j.Liveness.ExpiresAt, j.Liveness.Expired = &lv.ttl, &exp, &expired
		}
	}
	if !r.del.isLive() && !rc.shouldPurge(r.del.ldt) {
		j.Deletion = jDel(r.del)
	}
	var cells []rCell
	for _, c := range r.cells {
		switch {
		case c.cdel:
			if rc.shouldPurge(c.cdelDel.ldt) {
				continue
			}
		case c.tomb:
			if rc.shouldPurge(c.ldt) {
				continue
			}
		case c.ttl != 0 && rc.now >= c.ldt:
			// expired: a tombstone of the time it was written
			if rc.shouldPurge(c.ldt) || rc.shouldPurge(c.ldt-c.ttl) {
				continue
			}
			c = rCell{name: c.name, path: c.path, ts: c.ts, tomb: true, ldt: c.ldt - c.ttl}
		}
		cells = append(cells, c)
	}
	if j.Liveness == nil && j.Deletion == nil && len(cells) == 0 {
		return j, false
	}
	// Cells print by column in Cassandra's order, a collection's deletion
	// before its elements; the elements' own order is checked elsewhere.
	slices.SortStableFunc(cells, func(a, b rCell) int {
		if c := rc.order[a.name] - rc.order[b.name]; c != 0 {
			return c
		}
		switch {
		case a.cdel && !b.cdel:
			return -1
		case b.cdel && !a.cdel:
			return 1
		}
		return 0
	})
	for _, c := range cells {
		jc := jCell{Name: c.name, Path: c.path}
		if c.cdel {
			jc.Deletion = jDel(c.cdelDel)
			j.Cells = append(j.Cells, jc)
			continue
		}
		if lv == nil || c.ts != lv.ts {
			ts := strconv.FormatInt(c.ts, 10)
			jc.Tstamp = &ts
		}
		switch {
		case c.tomb:
			jc.Deletion = &jDeletion{LocalDeleteTime: strconv.FormatInt(c.ldt, 10)}
		default:
			jc.Value = c.value
			if c.ttl != 0 && (lv == nil || c.ttl != lv.ttl) {
				ttl, exp, expired := c.ttl, strconv.FormatInt(c.ldt, 10), c.ldt < rc.now
				jc.TTL, jc.ExpiresAt, jc.Expired = &ttl, &exp, &expired
			}
		}
		j.Cells = append(j.Cells, jc)
	}
	return j, true
}

// purgeMarker drops a purgeable range deletion (a boundary keeps the side
// that is not).
func (rc *reconciler) purgeMarker(m jRow) (jRow, bool) {
	purged := func(b *jBound) bool { return rc.shouldPurge(mustInt(rc.t, b.Deletion.LocalDeleteTime)) }
	switch {
	case m.Start != nil && m.End != nil:
		ps, pe := purged(m.Start), purged(m.End)
		switch {
		case ps && pe:
			return m, false
		case ps:
			return jRow{Type: "range_tombstone_bound", End: m.End}, true
		case pe:
			return jRow{Type: "range_tombstone_bound", Start: m.Start}, true
		}
	case m.Start != nil && purged(m.Start), m.End != nil && purged(m.End):
		return m, false
	}
	return m, true
}

// reconcileDumps merges the sstables' dumps by hand.
func (rc *reconciler) reconcileDumps(dumps [][]jPartition) map[string]*jPartition {
	byKey := map[string][]*rPartition{}
	for src, d := range dumps {
		for i := range d {
			p := fromDump(rc.t, src, &d[i])
			k := strings.Join(p.key, "\x00")
			byKey[k] = append(byKey[k], p)
		}
	}
	out := map[string]*jPartition{}
	for k, vs := range byKey {
		if p := rc.partition(vs); p != nil {
			out[k] = p
		}
	}
	return out
}

// checkAgainstReference holds dump --merge's output to the reconciliation
// of the sstables' own dumps, and its order to each sstable's.
func checkAgainstReference(t *testing.T, paths []string, o merge.Options, counter func([]string, []json.RawMessage, []rCell) rCell) (partitions int) {
	t.Helper()
	tbl, err := merge.Open(paths, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	want, dumps := reconcile(t, tbl, paths, o, counter)
	got := dumpMerged(t, tbl, o)
	seen := map[string]bool{}
	for i := range got {
		p := &got[i]
		k := strings.Join(p.Partition.Key, "\x00")
		if seen[k] {
			t.Fatalf("partition %v merged twice", p.Partition.Key)
		}
		seen[k] = true
		w := want[k]
		if w == nil {
			t.Errorf("partition %v: merged, but the reconciliation leaves nothing of it", p.Partition.Key)
			continue
		}
		checkCellOrder(t, p, dumps)
		// go-cmp words a difference; equal JSON is equal content, and
		// much faster to tell.
		nw, np := normalize(w), normalize(p)
		if key(nw) == key(np) {
			continue
		}
		if diff := cmp.Diff(nw, np); diff != "" {
			t.Errorf("partition %v (-reconciled +merged):\n%s", p.Partition.Key, diff)
		}
	}
	for k, w := range want {
		if !seen[k] {
			t.Errorf("partition %v: the reconciliation keeps it, the merge does not", w.Partition.Key)
		}
	}
	// Each sstable's partitions come in the merged output in its order.
	pos := map[string]int{}
	for i := range got {
		pos[strings.Join(got[i].Partition.Key, "\x00")] = i
	}
	for src, d := range dumps {
		last := -1
		for i := range d {
			at, ok := pos[strings.Join(d[i].Partition.Key, "\x00")]
			if !ok {
				continue
			}
			if at < last {
				t.Fatalf("sstable %d's partition %v comes before one it follows", src, d[i].Partition.Key)
			}
			last = at
		}
	}
	return len(got)
}

// reconcile is the reconciliation of the sstables' own dumps (and the
// dumps), keyed by the partition key's printed components.
func reconcile(t *testing.T, tbl *merge.Table, paths []string, o merge.Options, counter func([]string, []json.RawMessage, []rCell) rCell) (map[string]*jPartition, [][]jPartition) {
	t.Helper()
	rc := &reconciler{t: t, now: o.Now, purge: o.Purge, gcBefore: o.Now - o.GCGraceSeconds, types: map[string]string{}, order: map[string]int{}, counter: counter}
	sch := tbl.Schema()
	for i, c := range sch.Static {
		rc.order[c.Name] = i
		rc.types[c.Name] = tbl.StaticTypes()[i].CQL()
	}
	for i, c := range sch.Regular {
		rc.order[c.Name] = len(sch.Static) + i
		rc.types[c.Name] = tbl.RegularTypes()[i].CQL()
	}
	dumps := dumpEach(t, paths, o.Now)
	return rc.reconcileDumps(dumps), dumps
}

// normalize takes out what the reconciliation does not predict: positions
// (the merged output's are in the sstable each part came from), and the
// order of a collection's elements (checked by checkCellOrder).
func normalize(p *jPartition) *jPartition {
	c := *p
	c.Partition.Position = 0
	c.Rows = nil
	for _, r := range p.Rows {
		r.Position = 0
		r.Cells = slices.Clone(r.Cells)
		if len(r.Cells) == 0 {
			r.Cells = nil // "cells" : [ ]
		}
		for i := 0; i < len(r.Cells); {
			j := i
			for j < len(r.Cells) && r.Cells[j].Name == r.Cells[i].Name {
				j++
			}
			slices.SortStableFunc(r.Cells[i:j], func(a, b jCell) int { return strings.Compare(key(a.Path), key(b.Path)) })
			i = j
		}
		c.Rows = append(c.Rows, r)
	}
	return &c
}

// checkCellOrder: within a merged row, the cells one sstable also holds
// (by column and path) come in that sstable's order.
func checkCellOrder(t *testing.T, p *jPartition, dumps [][]jPartition) {
	t.Helper()
	k := key(p.Partition.Key)
	for _, d := range dumps {
		for i := range d {
			if key(d[i].Partition.Key) != k {
				continue
			}
			rowsAt := map[string][]jCell{}
			for _, r := range d[i].Rows {
				rowsAt[r.Type+key(r.Clustering)] = r.Cells
			}
			for _, r := range p.Rows {
				src, ok := rowsAt[r.Type+key(r.Clustering)]
				if !ok {
					continue
				}
				order := map[string]int{}
				for n, c := range src {
					order[c.Name+key(c.Path)+fmt.Sprint(c.Deletion != nil && c.Deletion.MarkedDeleted != "")] = n
				}
				last := -1
				for _, c := range r.Cells {
					n, ok := order[c.Name+key(c.Path)+fmt.Sprint(c.Deletion != nil && c.Deletion.MarkedDeleted != "")]
					if !ok {
						continue
					}
					if n < last {
						t.Errorf("partition %v row %v: cell %s %s out of the order of an sstable holding it", p.Partition.Key, key(r.Clustering), c.Name, key(c.Path))
					}
					last = n
				}
			}
		}
	}
}
