package merge

import (
	"bytes"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
)

// version is one sstable's version of a row or static row. Its cells
// carry the sstable's column indexes; cmap maps them to the united ones
// (nil: the same).
type version struct {
	src  int
	u    *rows.Unfiltered
	cmap []int
}

func (v *version) col(i int) int {
	if v.cmap == nil {
		return i
	}
	return v.cmap[i]
}

// activeDeletion is the deletion in force over a row (Row.Merger's
// activeDeletion) and where it comes from, for explanations.
type activeDeletion struct {
	dt   deletiontime.DeletionTime
	src  int
	what Reason // ShadowedBy...
}

var noDeletion = activeDeletion{dt: deletiontime.Live, src: -1, what: ShadowedByPartitionDeletion}

func (a activeDeletion) cause() *Cause {
	w := WhatPartitionDeletion
	switch a.what {
	case ShadowedByRangeDeletion:
		w = WhatRangeTombstone
	case ShadowedByRowDeletion:
		w = WhatRowDeletion
	case ShadowedByComplexDeletion:
		w = WhatComplexDeletion
	}
	return &Cause{SSTable: a.src, What: w, Timestamp: a.dt.MarkedForDeleteAt, LocalDeletionTime: a.dt.LocalDeletionTime}
}

// rowMerger is Row.Merger: it merges the versions of one row into out.
type rowMerger struct {
	cols   []column // united columns of the row's kind
	static bool
	t      *Table // names the sstables in errors

	out   rows.Unfiltered
	prov  Provenance
	arena []byte // merged counter contexts of the current row
	rec   *recorder

	// scratch, per version
	cellAt []int
	cdAt   []int
	group  []int // versions holding the column or path being merged
}

// name is the sstable of a version, for errors ("" outside a Table: a
// RowMerger's).
func (m *rowMerger) name(src int) string {
	if m.t == nil {
		return ""
	}
	return m.t.Name(src)
}

// passThrough copies the one version of a row with nothing to filter it
// (Row.Merger.merge with one row and no active deletion): as it is.
func (m *rowMerger) passThrough(v *version) {
	u := &m.out
	src := v.u
	u.Kind, u.Offset, u.Size, u.Flags, u.ExtFlags, u.PrevSize = src.Kind, src.Offset, src.Size, src.Flags, src.ExtFlags, src.PrevSize
	u.Clustering, u.Bound = src.Clustering, src.Bound
	u.Liveness, u.Deletion, u.Shadowable, u.ScyllaShadowable = src.Liveness, src.Deletion, src.Shadowable, src.ScyllaShadowable
	u.EndDeletion, u.StartDeletion = src.EndDeletion, src.StartDeletion
	u.ColumnsPresent = src.ColumnsPresent
	u.Cells = append(u.Cells[:0], src.Cells...)
	u.ComplexDeletions = append(u.ComplexDeletions[:0], src.ComplexDeletions...)
	m.prov.reset()
	m.prov.Row = v.src
	if src.Liveness.HasTimestamp {
		m.prov.Liveness = v.src
	}
	if src.HasDeletion() {
		m.prov.Deletion = v.src
	}
	if src.ExtFlags&rows.ExtFlagScyllaShadowable != 0 {
		m.prov.ShadowableDeletion = v.src
	}
	m.arena = m.arena[:0]
	for i := range u.Cells {
		u.Cells[i].Column = v.col(u.Cells[i].Column)
		m.readCounter(&u.Cells[i])
		m.prov.Cells = append(m.prov.Cells, v.src)
	}
	for i := range u.ComplexDeletions {
		u.ComplexDeletions[i].Column = v.col(u.ComplexDeletions[i].Column)
		m.prov.ComplexDeletions = append(m.prov.ComplexDeletions, v.src)
	}
	if m.rec != nil {
		m.recordAll(v)
	}
}

// readCounter clears the local shards of a live counter cell whose
// context is marked for it, as Cassandra's read of the cell does
// (clearLocalShards); c's value then lies in the arena.
func (m *rowMerger) readCounter(c *rows.Cell) {
	if c.Column >= len(m.cols) || !m.cols[c.Column].Counter || hasDeletionTime(c) {
		return
	}
	c.Value, m.arena, _ = clearLocalShards(m.arena, c.Value)
}

// recordAll records every part of a version that passed through whole
// (its cells as the output holds them: mapped, counters read).
func (m *rowMerger) recordAll(v *version) {
	u := v.u
	if u.Liveness.HasTimestamp {
		m.rec.add(Version{SSTable: v.src, What: WhatLiveness, Column: -1, Static: m.static, Liveness: u.Liveness})
	}
	if u.HasDeletion() {
		m.rec.add(Version{SSTable: v.src, What: WhatRowDeletion, Column: -1, Static: m.static, Deletion: u.Deletion, Shadowable: u.Shadowable})
	}
	if u.ExtFlags&rows.ExtFlagScyllaShadowable != 0 {
		m.rec.add(Version{SSTable: v.src, What: WhatRowDeletion, Column: -1, Static: m.static, Deletion: u.ScyllaShadowable, Shadowable: true})
	}
	for _, cd := range u.ComplexDeletions {
		m.rec.add(Version{SSTable: v.src, What: WhatComplexDeletion, Column: v.col(cd.Column), Static: m.static, Deletion: cd.Deletion})
	}
	for i := range m.out.Cells {
		m.rec.add(m.cellVersion(v.src, &m.out.Cells[i], Won, nil))
	}
}

func (m *rowMerger) cellVersion(src int, c *rows.Cell, verdict Reason, by *Cause) Version {
	v := Version{SSTable: src, What: WhatCell, Column: c.Column, Static: m.static, Cell: *c, Verdict: verdict, By: by}
	if c.Column < len(m.cols) && m.cols[c.Column].Counter && !isTombstone(c) {
		v.Shards, _ = cqltype.CounterShards(c.Value)
	}
	return v
}

// merge merges vs (at least one; those of one position) under the active
// deletion. It reports false when nothing survives (the row is not
// written).
func (m *rowMerger) merge(vs []version, active activeDeletion) (bool, error) {
	if len(vs) == 1 && active.dt.IsLive() {
		m.passThrough(&vs[0])
		return true, nil
	}
	u := &m.out
	first := vs[0].u
	u.Kind, u.Flags, u.ExtFlags, u.Size, u.PrevSize = first.Kind, 0, 0, 0, 0
	u.Clustering, u.Bound = first.Clustering, clustering.Prefix{}
	u.Liveness, u.Deletion, u.Shadowable, u.ScyllaShadowable = rows.Liveness{}, deletiontime.Live, false, deletiontime.DeletionTime{}
	u.EndDeletion, u.StartDeletion = deletiontime.DeletionTime{}, deletiontime.DeletionTime{}
	u.Cells, u.ComplexDeletions, u.ColumnsPresent = u.Cells[:0], u.ComplexDeletions[:0], 0
	m.prov.reset()
	m.arena = m.arena[:0]
	newest := -1
	contributed := func(src int) {
		if src > newest {
			newest = src
		}
	}

	// Liveness: the one that supersedes the others.
	info, infoAt := rows.Liveness{}, -1
	for i := range vs {
		if ok, _ := livenessSupersedes(&vs[i].u.Liveness, &info); ok {
			info, infoAt = vs[i].u.Liveness, i
		}
	}
	// Row deletion.
	scylla := false
	for i := range vs {
		scylla = scylla || vs[i].u.ExtFlags&rows.ExtFlagScyllaShadowable != 0
	}
	var del rowDeletionState
	if scylla {
		del = m.scyllaDeletion(vs, &info)
	} else {
		del = m.cassandraDeletion(vs, &info)
	}
	if supersedes(del.effective, active.dt) {
		active = activeDeletion{dt: del.effective, src: del.effectiveSrc, what: ShadowedByRowDeletion}
		m.writeDeletion(&del)
		contributed(del.effectiveSrc)
		if del.regularSrc >= 0 {
			contributed(del.regularSrc)
		}
	} else if m.rec != nil {
		for _, l := range del.live {
			l.Verdict, l.By = active.what, active.cause()
			m.rec.add(l)
		}
	}
	if m.rec != nil {
		for _, l := range del.lost {
			m.rec.add(l)
		}
	}
	shadowedInfo := infoAt >= 0 && deletes(active.dt, info.Timestamp)
	if m.rec != nil {
		m.recordLiveness(vs, infoAt, &info, shadowedInfo, active)
	}
	if shadowedInfo {
		info, infoAt = rows.Liveness{}, -1
	}
	if infoAt >= 0 {
		u.Liveness = info
		u.Flags |= rows.FlagHasTimestamp
		if livenessExpiring(&info) {
			u.Flags |= rows.FlagHasTTL
		}
		m.prov.Liveness = vs[infoAt].src
		contributed(vs[infoAt].src)
	}

	// Columns, in order.
	m.cellAt = resize(m.cellAt, len(vs))
	m.cdAt = resize(m.cdAt, len(vs))
	for {
		c := -1
		for i := range vs {
			if k := m.cellAt[i]; k < len(vs[i].u.Cells) {
				if cc := vs[i].col(vs[i].u.Cells[k].Column); c < 0 || cc < c {
					c = cc
				}
			}
			if k := m.cdAt[i]; k < len(vs[i].u.ComplexDeletions) {
				if cc := vs[i].col(vs[i].u.ComplexDeletions[k].Column); c < 0 || cc < c {
					c = cc
				}
			}
		}
		if c < 0 {
			break
		}
		var err error
		if c < len(m.cols) && m.cols[c].Complex {
			err = m.complexColumn(vs, c, active, contributed)
		} else {
			err = m.simpleColumn(vs, c, active, contributed)
		}
		if err != nil {
			return false, err
		}
	}
	if infoAt < 0 && !u.HasDeletion() && u.ExtFlags&rows.ExtFlagScyllaShadowable == 0 && len(u.Cells) == 0 && len(u.ComplexDeletions) == 0 {
		return false, nil
	}
	if len(u.ComplexDeletions) > 0 {
		u.Flags |= rows.FlagHasComplexDelete
	}
	if u.Kind == rows.KindStaticRow {
		u.ExtFlags |= rows.ExtFlagIsStatic
	}
	if u.ExtFlags != 0 {
		u.Flags |= rows.FlagExtension
	}
	u.ColumnsPresent = countColumns(u)
	if u.ColumnsPresent == len(m.cols) {
		u.Flags |= rows.FlagHasAllColumns
	}
	m.prov.Row = newest
	u.Offset = offsetIn(vs, newest)
	return true, nil
}

func resize(s []int, n int) []int {
	if cap(s) < n {
		s = make([]int, n)
	}
	s = s[:n]
	clear(s)
	return s
}

func offsetIn(vs []version, src int) int64 {
	for i := range vs {
		if vs[i].src == src {
			return vs[i].u.Offset
		}
	}
	return vs[len(vs)-1].u.Offset
}

func countColumns(u *rows.Unfiltered) int {
	n, last := 0, -1
	ci, di := 0, 0
	for ci < len(u.Cells) || di < len(u.ComplexDeletions) {
		c := -1
		if ci < len(u.Cells) {
			c = u.Cells[ci].Column
		}
		if di < len(u.ComplexDeletions) && (c < 0 || u.ComplexDeletions[di].Column < c) {
			c = u.ComplexDeletions[di].Column
		}
		if c != last {
			n++
			last = c
		}
		for ci < len(u.Cells) && u.Cells[ci].Column == c {
			ci++
		}
		for di < len(u.ComplexDeletions) && u.ComplexDeletions[di].Column == c {
			di++
		}
	}
	return n
}

func (m *rowMerger) recordLiveness(vs []version, infoAt int, info *rows.Liveness, shadowed bool, active activeDeletion) {
	for i := range vs {
		l := &vs[i].u.Liveness
		if !l.HasTimestamp {
			continue
		}
		v := Version{SSTable: vs[i].src, What: WhatLiveness, Column: -1, Static: m.static, Liveness: *l}
		switch {
		case i == infoAt && shadowed:
			v.Verdict, v.By = active.what, active.cause()
		case i == infoAt:
		default:
			_, why := livenessSupersedes(info, l)
			if *l == *info {
				why = Duplicate
			}
			v.Verdict = why
			v.By = &Cause{SSTable: vs[infoAt].src, What: WhatLiveness, Timestamp: info.Timestamp, LocalDeletionTime: info.LocalExpirationTime}
		}
		m.rec.add(v)
	}
}

// rowDeletionState is the merged row deletion before the active deletion
// decides whether it is written: the effective deletion (what shadows
// the row's data), for ScyllaDB's rows also the regular one beneath a
// shadowable one, and the versions it beat.
type rowDeletionState struct {
	effective    deletiontime.DeletionTime
	effectiveSrc int
	shadowable   bool
	// ScyllaDB: the regular deletion, written beside a shadowable one
	// that is larger.
	regular    deletiontime.DeletionTime
	regularSrc int
	scylla     bool
	live       []Version // the winners, should the active deletion beat them
	lost       []Version // losers, with their verdicts
}

// cassandraDeletion is Row.Merger's row deletion: the one that
// supersedes the others (Deletion.supersedes compares the times only),
// made void when shadowable and the row's liveness is newer.
func (m *rowMerger) cassandraDeletion(vs []version, info *rows.Liveness) rowDeletionState {
	d := rowDeletionState{effective: deletiontime.Live, effectiveSrc: -1, regularSrc: -1}
	at := -1
	for i := range vs {
		if dt := rowDeletion(vs[i].u); supersedes(dt, d.effective) {
			d.effective, d.effectiveSrc, d.shadowable, at = dt, vs[i].src, vs[i].u.Shadowable, i
		}
	}
	if m.rec != nil {
		for i := range vs {
			if i == at || !vs[i].u.HasDeletion() {
				continue
			}
			dt := vs[i].u.Deletion
			d.lost = append(d.lost, Version{SSTable: vs[i].src, What: WhatRowDeletion, Column: -1, Static: m.static, Deletion: dt,
				Shadowable: vs[i].u.Shadowable, Verdict: deletionLoss(d.effective, dt),
				By: &Cause{SSTable: d.effectiveSrc, What: WhatRowDeletion, Timestamp: d.effective.MarkedForDeleteAt, LocalDeletionTime: d.effective.LocalDeletionTime}})
		}
	}
	if at >= 0 && d.shadowable && livenessTimestamp(info) > d.effective.MarkedForDeleteAt {
		if m.rec != nil {
			d.lost = append(d.lost, Version{SSTable: d.effectiveSrc, What: WhatRowDeletion, Column: -1, Static: m.static, Deletion: d.effective,
				Shadowable: true, Verdict: ShadowableShadowed, By: &Cause{SSTable: -1, What: WhatLiveness, Timestamp: info.Timestamp}})
		}
		return rowDeletionState{effective: deletiontime.Live, effectiveSrc: -1, regularSrc: -1, lost: d.lost}
	}
	if at >= 0 && m.rec != nil {
		d.live = append(d.live, Version{SSTable: d.effectiveSrc, What: WhatRowDeletion, Column: -1, Static: m.static, Deletion: d.effective, Shadowable: d.shadowable})
	}
	return d
}

// scyllaDeletion is ScyllaDB's row_tombstone: the largest regular
// deletion, and the largest shadowable one (never below the regular),
// which newer row liveness makes void (row_tombstone::maybe_shadow).
func (m *rowMerger) scyllaDeletion(vs []version, info *rows.Liveness) rowDeletionState {
	d := rowDeletionState{effective: deletiontime.Live, effectiveSrc: -1, regular: deletiontime.Live, regularSrc: -1, scylla: true}
	shadow, shadowSrc := deletiontime.Live, -1
	for i := range vs {
		u := vs[i].u
		if u.HasDeletion() {
			if u.Shadowable {
				if supersedes(u.Deletion, shadow) {
					shadow, shadowSrc = u.Deletion, vs[i].src
				}
			} else if supersedes(u.Deletion, d.regular) {
				d.regular, d.regularSrc = u.Deletion, vs[i].src
			}
		}
		if u.ExtFlags&rows.ExtFlagScyllaShadowable != 0 && supersedes(u.ScyllaShadowable, shadow) {
			shadow, shadowSrc = u.ScyllaShadowable, vs[i].src
		}
	}
	markerLive := info.HasTimestamp && !livenessExpired(info)
	if shadowSrc >= 0 && supersedes(shadow, d.regular) && !(markerLive && info.Timestamp > shadow.MarkedForDeleteAt) {
		d.effective, d.effectiveSrc, d.shadowable = shadow, shadowSrc, true
	} else {
		d.effective, d.effectiveSrc = d.regular, d.regularSrc
		if shadowSrc >= 0 && supersedes(shadow, d.regular) && m.rec != nil {
			d.lost = append(d.lost, Version{SSTable: shadowSrc, What: WhatRowDeletion, Column: -1, Static: m.static, Deletion: shadow,
				Shadowable: true, Verdict: ShadowableShadowed, By: &Cause{SSTable: -1, What: WhatLiveness, Timestamp: info.Timestamp}})
			shadowSrc = -1
		}
	}
	if m.rec != nil {
		for i := range vs {
			u := vs[i].u
			for k, dt := range []deletiontime.DeletionTime{u.Deletion, u.ScyllaShadowable} {
				sh := k == 1 || u.Shadowable
				if k == 0 && !u.HasDeletion() || k == 1 && u.ExtFlags&rows.ExtFlagScyllaShadowable == 0 {
					continue
				}
				v := Version{SSTable: vs[i].src, What: WhatRowDeletion, Column: -1, Static: m.static, Deletion: dt, Shadowable: sh}
				switch {
				case sh && vs[i].src == shadowSrc && dt == shadow, !sh && vs[i].src == d.regularSrc && dt == d.regular:
					d.live = append(d.live, v)
					continue
				case sh && shadowSrc < 0:
					continue // recorded as shadowed by liveness
				}
				w, ws := d.regular, d.regularSrc
				if sh {
					w, ws = shadow, shadowSrc
				}
				v.Verdict = deletionLoss(w, dt)
				v.By = &Cause{SSTable: ws, What: WhatRowDeletion, Timestamp: w.MarkedForDeleteAt, LocalDeletionTime: w.LocalDeletionTime}
				d.lost = append(d.lost, v)
			}
		}
	}
	return d
}

// writeDeletion puts the merged row deletion on the output row.
func (m *rowMerger) writeDeletion(d *rowDeletionState) {
	u := &m.out
	if !d.scylla {
		u.Deletion, u.Shadowable = d.effective, d.shadowable
		u.Flags |= rows.FlagHasDeletion
		if d.shadowable {
			u.ExtFlags |= rows.ExtFlagShadowableDel
		}
		m.prov.Deletion = d.effectiveSrc
		if m.rec != nil {
			for _, v := range d.live {
				m.rec.add(v)
			}
		}
		return
	}
	if !d.regular.IsLive() {
		u.Deletion = d.regular
		u.Flags |= rows.FlagHasDeletion
		m.prov.Deletion = d.regularSrc
	}
	if d.shadowable {
		u.ScyllaShadowable = d.effective
		u.ExtFlags |= rows.ExtFlagScyllaShadowable
		m.prov.ShadowableDeletion = d.effectiveSrc
	}
	if m.rec != nil {
		for _, v := range d.live {
			m.rec.add(v)
		}
	}
}

// simpleColumn reconciles the versions' cells of simple column c (at most
// one per version).
func (m *rowMerger) simpleColumn(vs []version, c int, active activeDeletion, contributed func(int)) error {
	m.group = m.group[:0]
	for i := range vs {
		if k := m.cellAt[i]; k < len(vs[i].u.Cells) && vs[i].col(vs[i].u.Cells[k].Column) == c {
			m.group = append(m.group, i)
		}
	}
	counter := c < len(m.cols) && m.cols[c].Counter
	var cells [8]rows.Cell
	group := cells[:0]
	var srcBuf [8]int
	srcs := srcBuf[:0]
	for _, i := range m.group {
		cell := vs[i].u.Cells[m.cellAt[i]]
		m.cellAt[i]++
		cell.Column = c
		m.readCounter(&cell)
		group = append(group, cell)
		srcs = append(srcs, vs[i].src)
	}
	return m.reconcile(vs, group, srcs, counter, active, contributed)
}

// reconcile is the reduction of Row.Merger's ColumnDataReducer (simple
// columns) and CellReducer (one path of a complex column): the cells the
// active deletion does not delete, reconciled in sstable order.
func (m *rowMerger) reconcile(vs []version, group []rows.Cell, srcs []int, counter bool, active activeDeletion, contributed func(int)) error {
	var merged rows.Cell
	mergedSrc, have := -1, false
	for k := range group {
		cell := &group[k]
		if deletes(active.dt, cell.Timestamp) {
			if m.rec != nil {
				m.rec.add(m.cellVersion(srcs[k], cell, active.what, active.cause()))
			}
			continue
		}
		if !have {
			merged, mergedSrc, have = *cell, srcs[k], true
			continue
		}
		if counter && (!isTombstone(&merged) || !isTombstone(cell)) {
			out, arena, took, _, err := resolveCounter(m.arena, &merged, cell)
			m.arena = arena
			if err != nil {
				return counterError(m.name(srcs[k]), offsetIn(vs, srcs[k]), err)
			}
			switch took {
			case tookRight:
				mergedSrc = srcs[k]
			case tookNew:
				mergedSrc = Merged
			}
			merged = out
			continue
		}
		if w, _ := resolveRegular(&merged, cell); w == 1 {
			merged, mergedSrc = *cell, srcs[k]
		}
	}
	if !have {
		return nil
	}
	m.out.Cells = append(m.out.Cells, merged)
	m.prov.Cells = append(m.prov.Cells, mergedSrc)
	for k := range group {
		if deletes(active.dt, group[k].Timestamp) {
			continue
		}
		if mergedSrc == Merged || srcs[k] == mergedSrc {
			contributed(srcs[k])
		}
	}
	if m.rec != nil {
		m.recordCells(group, srcs, counter, active, &merged, mergedSrc)
	}
	return nil
}

func (m *rowMerger) recordCells(group []rows.Cell, srcs []int, counter bool, active activeDeletion, merged *rows.Cell, mergedSrc int) {
	won := false
	for k := range group {
		cell := &group[k]
		if deletes(active.dt, cell.Timestamp) {
			continue
		}
		switch {
		case mergedSrc == Merged:
			m.rec.add(m.cellVersion(srcs[k], cell, CounterMerged, nil))
		case srcs[k] == mergedSrc && !won:
			won = true
			m.rec.add(m.cellVersion(srcs[k], cell, Won, nil))
		default:
			var why Reason
			if counter && (!isTombstone(merged) || !isTombstone(cell)) {
				_, _, _, why, _ = resolveCounter(nil, merged, cell)
			} else {
				_, why = resolveRegular(merged, cell)
			}
			by := &Cause{SSTable: mergedSrc, What: WhatCell, Timestamp: merged.Timestamp, LocalDeletionTime: merged.LocalDeletionTime}
			m.rec.add(m.cellVersion(srcs[k], cell, why, by))
		}
	}
}

// complexColumn merges the versions of complex column c: the largest
// collection deletion, kept when it supersedes the active deletion (and
// then the one that shadows the cells), and the cells path by path.
func (m *rowMerger) complexColumn(vs []version, c int, active activeDeletion, contributed func(int)) error {
	cd, cdSrc := deletiontime.Live, -1
	var cds []Version
	for i := range vs {
		if k := m.cdAt[i]; k < len(vs[i].u.ComplexDeletions) && vs[i].col(vs[i].u.ComplexDeletions[k].Column) == c {
			dt := vs[i].u.ComplexDeletions[k].Deletion
			m.cdAt[i]++
			if supersedes(dt, cd) {
				cd, cdSrc = dt, vs[i].src
			}
			if m.rec != nil {
				cds = append(cds, Version{SSTable: vs[i].src, What: WhatComplexDeletion, Column: c, Static: m.static, Deletion: dt})
			}
		}
	}
	cellActive := active
	if cdSrc >= 0 && supersedes(cd, active.dt) {
		cellActive = activeDeletion{dt: cd, src: cdSrc, what: ShadowedByComplexDeletion}
		m.out.ComplexDeletions = append(m.out.ComplexDeletions, rows.ComplexDeletion{Column: c, Deletion: cd})
		m.prov.ComplexDeletions = append(m.prov.ComplexDeletions, cdSrc)
		contributed(cdSrc)
	}
	if m.rec != nil {
		kept := cellActive.what == ShadowedByComplexDeletion
		for _, v := range cds {
			switch {
			case kept && v.SSTable == cdSrc && v.Deletion == cd:
				kept = false // the winner, once
			case cellActive.what == ShadowedByComplexDeletion:
				v.Verdict = deletionLoss(cd, v.Deletion)
				v.By = cellActive.cause()
			default:
				v.Verdict, v.By = active.what, active.cause()
			}
			m.rec.add(v)
		}
	}
	// The cells, path by path.
	var pathType *cqltype.Type
	if c < len(m.cols) {
		pathType = m.cols[c].typ.ElementPathType()
	}
	counter := c < len(m.cols) && m.cols[c].Counter
	for {
		var path []byte
		found := false
		for i := range vs {
			if k := m.cellAt[i]; k < len(vs[i].u.Cells) && vs[i].col(vs[i].u.Cells[k].Column) == c {
				p := vs[i].u.Cells[k].Path
				if !found || comparePaths(pathType, p, path) < 0 {
					path, found = p, true
				}
			}
		}
		if !found {
			return nil
		}
		var cells [8]rows.Cell
		group := cells[:0]
		var srcBuf [8]int
		srcs := srcBuf[:0]
		for i := range vs {
			if k := m.cellAt[i]; k < len(vs[i].u.Cells) && vs[i].col(vs[i].u.Cells[k].Column) == c &&
				comparePaths(pathType, vs[i].u.Cells[k].Path, path) == 0 {
				cell := vs[i].u.Cells[k]
				cell.Column = c
				m.cellAt[i]++
				group = append(group, cell)
				srcs = append(srcs, vs[i].src)
			}
		}
		if err := m.reconcile(vs, group, srcs, counter, cellActive, contributed); err != nil {
			return err
		}
	}
}

// comparePaths is ColumnMetadata.cellPathComparator: the collection's
// key (or a user type's field position) order.
func comparePaths(t *cqltype.Type, a, b []byte) int {
	if t == nil {
		return bytes.Compare(a, b)
	}
	return t.Compare(a, b)
}
