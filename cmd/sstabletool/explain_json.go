package main

import (
	"encoding/hex"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/merge"
)

// explain --json's shape: the same as the text, as fields.
type (
	explainJSON struct {
		Key []string `json:"key"`
		// KeyColumns and ClusteringColumns name the key's and the
		// clustering values' columns, where the schema gives them.
		KeyColumns        []string      `json:"key_columns,omitempty"`
		ClusteringColumns []string      `json:"clustering_columns,omitempty"`
		Now               int64         `json:"now"`
		Purge             bool          `json:"purge"`
		GCBefore          *int64        `json:"gc_before,omitempty"`
		SSTables          []sstableJSON `json:"sstables"`
		PartitionDeletion *deletionJSON `json:"partition_deletion"`
		Versions          []versionJSON `json:"partition_deletion_versions"`
		Entries           []entryJSON   `json:"entries"`
	}
	sstableJSON struct {
		Index int    `json:"index"`
		Path  string `json:"path"`
		Holds bool   `json:"holds_key"`
	}
	deletionJSON struct {
		MarkedForDeleteAt int64 `json:"marked_deleted"`
		LocalDeletionTime int64 `json:"local_delete_time"`
	}
	entryJSON struct {
		Kind       string        `json:"kind"`
		Clustering []string      `json:"clustering,omitempty"`
		Bound      string        `json:"bound,omitempty"`
		Written    bool          `json:"written"`
		Versions   []versionJSON `json:"versions"`
		// MergedCounters are the counters the merge combined from
		// several versions' shards (their sstable is 0: none).
		MergedCounters []versionJSON `json:"merged_counters,omitempty"`
	}
	versionJSON struct {
		SSTable           int           `json:"sstable"`
		What              string        `json:"what"`
		Text              string        `json:"text"`
		Column            string        `json:"column,omitempty"`
		Path              string        `json:"path,omitempty"`
		Value             *string       `json:"value,omitempty"`
		Timestamp         *int64        `json:"timestamp,omitempty"`
		TTL               int64         `json:"ttl,omitempty"`
		LocalDeletionTime *int64        `json:"local_delete_time,omitempty"`
		Tombstone         bool          `json:"tombstone,omitempty"`
		Deletion          *deletionJSON `json:"deletion,omitempty"`
		Shadowable        bool          `json:"shadowable,omitempty"`
		Verdict           string        `json:"verdict"`
		Reason            string        `json:"reason"`
		By                *causeJSON    `json:"by,omitempty"`
	}
	causeJSON struct {
		SSTable           int    `json:"sstable"`
		What              string `json:"what"`
		Timestamp         int64  `json:"timestamp"`
		LocalDeletionTime int64  `json:"local_delete_time,omitempty"`
	}
)

func (x *explainer) json(e *merge.Explanation) *explainJSON {
	out := &explainJSON{Key: keyParts(x.t.KeyType(), e.Key), KeyColumns: x.keyNames, ClusteringColumns: x.clusteringNames,
		Now: e.Now, Purge: e.Purge, Versions: []versionJSON{}, Entries: []entryJSON{}}
	if e.Purge {
		out.GCBefore = &e.GCBefore
	}
	held := map[int]bool{}
	for _, i := range e.Holding {
		held[i] = true
	}
	for i := range x.t.SSTables() {
		out.SSTables = append(out.SSTables, sstableJSON{Index: i + 1, Path: x.t.Name(i), Holds: held[i]})
	}
	if !e.Merged.IsLive() {
		out.PartitionDeletion = deletionOf(e.Merged)
	}
	for i := range e.PartitionDeletion {
		out.Versions = append(out.Versions, x.versionJSON(&e.PartitionDeletion[i]))
	}
	for i := range e.Entries {
		en := &e.Entries[i]
		j := entryJSON{Kind: en.Kind.String(), Written: en.Output != nil, Versions: []versionJSON{}}
		switch en.Kind {
		case rows.KindMarker:
			j.Bound = x.bound(en.Bound)
		case rows.KindRow:
			for k, v := range en.Clustering {
				j.Clustering = append(j.Clustering, x.value(x.t.ClusteringTypes()[k], v))
			}
		}
		for k := range en.Versions {
			j.Versions = append(j.Versions, x.versionJSON(&en.Versions[k]))
		}
		for _, v := range mergedCounters(en) {
			vj := x.versionJSON(&v)
			vj.SSTable = 0
			j.MergedCounters = append(j.MergedCounters, vj)
		}
		out.Entries = append(out.Entries, j)
	}
	return out
}

func deletionOf(d deletiontime.DeletionTime) *deletionJSON {
	return &deletionJSON{MarkedForDeleteAt: d.MarkedForDeleteAt, LocalDeletionTime: d.LocalDeletionTime}
}

func (x *explainer) versionJSON(v *merge.Version) versionJSON {
	j := versionJSON{SSTable: v.SSTable + 1, What: v.What.String(), Text: x.what(v), Shadowable: v.Shadowable,
		Verdict: verdictWord(v.Verdict), Reason: v.Verdict.String()}
	switch v.What {
	case merge.WhatCell:
		name, t := x.column(v)
		j.Column = name
		c := &v.Cell
		if c.Path != nil {
			j.Path = hex.EncodeToString(c.Path)
		}
		ts := c.Timestamp
		j.Timestamp = &ts
		if c.Flags&(rows.CellFlagDeleted|rows.CellFlagExpiring) != 0 {
			ldt := c.LocalDeletionTime
			j.LocalDeletionTime = &ldt
			j.Tombstone = c.TTL == 0
		}
		j.TTL = c.TTL
		if !j.Tombstone {
			s := x.value(nil, c.Value)
			if t != nil && !t.IsMultiCell() {
				s = x.cellValue(t, c.Value)
			}
			j.Value = &s
		}
	case merge.WhatLiveness:
		ts := v.Liveness.Timestamp
		j.Timestamp = &ts
		j.TTL = v.Liveness.TTL
		if v.Liveness.TTL != 0 {
			let := v.Liveness.LocalExpirationTime
			j.LocalDeletionTime = &let
		}
	case merge.WhatComplexDeletion:
		j.Column, _ = x.column(v)
		j.Deletion = deletionOf(v.Deletion)
	default:
		j.Deletion = deletionOf(v.Deletion)
	}
	if b := v.By; b != nil {
		j.By = &causeJSON{SSTable: b.SSTable + 1, What: b.What.String(), Timestamp: b.Timestamp, LocalDeletionTime: b.LocalDeletionTime}
		if b.SSTable < 0 {
			j.By.SSTable = 0
		}
	}
	return j
}

func verdictWord(r merge.Reason) string {
	switch r {
	case merge.Won:
		return "won"
	case merge.CounterMerged:
		return "merged"
	case merge.Expired:
		return "expired"
	case merge.Purged:
		return "purged"
	}
	return "lost"
}

// keyParts is a partition key as sstabledump's "key" array: each
// component of a composite key as text, or the key.
func keyParts(t *cqltype.Type, key []byte) []string {
	if t.Kind == cqltype.Composite {
		if comps, _, err := t.Components(key); err == nil {
			out := make([]string, 0, len(comps))
			for i, c := range comps {
				if i < len(t.Params) {
					if s, err := t.Params[i].Format(c.Value); err == nil {
						out = append(out, s)
						continue
					}
				}
				out = append(out, "0x"+hex.EncodeToString(c.Value))
			}
			return out
		}
	}
	if s, err := t.Format(key); err == nil {
		return []string{s}
	}
	return []string{"0x" + hex.EncodeToString(key)}
}
