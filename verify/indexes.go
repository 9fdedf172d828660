package verify

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/format/sai"
	"github.com/sstabletool/sstabletool/internal/format/sasi"
	"github.com/sstabletool/sstabletool/reader"
)

// checkIndexes checks the SAI and SASI files beside the sstable (the
// ones TOC.txt names; see sstable.IndexFiles), naming the index each
// belongs to:
//
//   - every SAI file but the empty GroupComplete marker: the codec header,
//     the footer and the CRC32C of the whole file, as
//     SAICodecUtils.validate and validateChecksum do (V1OnDiskFormat's
//     validatePerSSTableIndexComponents and validatePerColumnIndexComponents,
//     which Cassandra runs when it loads them); a complete build's files
//     all there (a file validation cannot open fails it); an index whose
//     ColumnComplete marker is missing is a note: Cassandra takes that
//     sstable as not indexed and builds it (findNonIndexedSSTables);
//   - a SASI file: its structure and every key position its token trees
//     hold (internal/format/sasi).
func checkIndexes(s *sstable.SSTable, r *Report) {
	files := s.IndexFiles()
	if len(files) == 0 {
		return
	}
	var kinds []string
	for _, f := range files {
		if !slices.Contains(kinds, string(f.Kind)) {
			kinds = append(kinds, string(f.Kind))
		}
	}
	r.Checks = append(r.Checks, "index components ("+strings.Join(kinds, ", ")+") against their framing, checksums and Index.db")
	saiIndexes := map[string][]sstable.IndexFile{}
	var perSSTable []sstable.IndexFile
	for _, f := range files {
		if f.Size < 0 {
			continue // checkComponentsPresent reports it
		}
		switch {
		case f.Kind == format.IndexSASI:
			checkSASI(s, r, f)
		case f.PerSSTable():
			perSSTable = append(perSSTable, f)
			checkSAIFile(r, f, "SAI's per-sstable components (shared by every SAI index of the table)")
		default:
			saiIndexes[f.Index] = append(saiIndexes[f.Index], f)
			checkSAIFile(r, f, "SAI index "+f.Index)
		}
	}
	if len(saiIndexes) == 0 && len(perSSTable) == 0 {
		return
	}
	checkSAIComplete(s, r, perSSTable, saiIndexes)
}

func indexProblem(r *Report, f sstable.IndexFile, off int64, msg string) {
	r.add(Problem{File: f.Path, Component: f.Component, Offset: off, Message: msg})
}

// checkSAIFile checks one SAI file's framing and checksum; who names the
// index it belongs to.
func checkSAIFile(r *Report, f sstable.IndexFile, who string) {
	if f.Part == format.SAIGroupComplete {
		// Files.touch: an empty file, whose presence is all that counts.
		if f.Size != 0 {
			indexProblem(r, f, 0, fmt.Sprintf("%s: the GroupComplete marker holds %d bytes; Cassandra writes it empty", who, f.Size))
		}
		return
	}
	rf, err := reader.Open(f.Path, reader.Buffered)
	if err != nil {
		indexProblem(r, f, -1, fmt.Sprintf("%s: %v", who, err))
		return
	}
	defer rf.Close()
	fr, err := sai.Check(rf, rf.Size())
	if err == nil && f.Part == format.SAIColumnComplete {
		_, err = sai.ColumnCompleteEmpty(rf, fr)
	}
	if err == nil {
		return
	}
	if ce, ok := corrupt.As(err); ok {
		indexProblem(r, f, ce.Offset, fmt.Sprintf("%s is damaged: %s (Cassandra fails its validation and does not use this sstable's index)", who, corruptText(ce)))
		return
	}
	indexProblem(r, f, -1, fmt.Sprintf("%s: %v", who, err))
}

// corruptText is a corrupt.Error's message without the place.
func corruptText(ce *corrupt.Error) string {
	var parts []string
	if ce.Expected != "" {
		parts = append(parts, "expected "+ce.Expected)
	}
	if ce.Err != nil {
		parts = append(parts, ce.Err.Error())
	}
	return strings.Join(parts, ": ")
}

// checkSAIComplete checks that a build's files are all there: with the
// GroupComplete marker, every per-sstable component of the table's kind;
// with an index's ColumnComplete marker, the index's components (a
// non-empty one's Meta and PostingLists, and its TermsData or
// BalancedTree).
func checkSAIComplete(s *sstable.SSTable, r *Report, perSSTable []sstable.IndexFile, indexes map[string][]sstable.IndexFile) {
	has := func(fs []sstable.IndexFile, part string) (sstable.IndexFile, bool) {
		for _, f := range fs {
			if f.Part == part && f.Size >= 0 {
				return f, true
			}
		}
		return sstable.IndexFile{}, false
	}
	group, complete := has(perSSTable, format.SAIGroupComplete)
	if complete {
		for _, part := range format.SAIPerSSTableComponents(len(s.ClusteringTypes()) > 0) {
			if _, ok := has(perSSTable, part); !ok {
				name := "SAI+" + group.Version + "+" + part + ".db"
				r.add(Problem{File: s.Path(name), Component: name, Offset: -1,
					Message: "SAI's per-sstable components: missing, where GroupComplete says the build finished (Cassandra's validation cannot open it and does not use this sstable's SAI indexes)"})
			}
		}
	}
	names := make([]string, 0, len(indexes))
	for n := range indexes {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, ix := range names {
		fs := indexes[ix]
		marker, ok := has(fs, format.SAIColumnComplete)
		if !ok || !complete {
			what := "no ColumnComplete marker"
			if !complete {
				what = "no GroupComplete marker"
			}
			r.Notes = append(r.Notes, Problem{File: s.Path(fs[0].Component), Component: fs[0].Component, Offset: -1,
				Message: fmt.Sprintf("SAI index %s: %s: Cassandra takes this sstable as not indexed and builds its index at startup (StorageAttachedIndex.findNonIndexedSSTables)", ix, what)})
			continue
		}
		if empty := markerEmpty(marker); empty {
			continue
		}
		need := []string{format.SAIMeta, format.SAIPostingLists}
		_, terms := has(fs, format.SAITermsData)
		_, tree := has(fs, format.SAIBalancedTree)
		if !terms && !tree {
			need = append(need, format.SAITermsData+" or "+format.SAIBalancedTree)
		}
		for _, part := range need {
			if _, ok := has(fs, part); ok {
				continue
			}
			name := "SAI+" + marker.Version + "+" + ix + "+" + part + ".db"
			r.add(Problem{File: s.Path(name), Component: name, Offset: -1,
				Message: fmt.Sprintf("SAI index %s: missing, where ColumnComplete says its build finished with terms (Cassandra's validation cannot open it and does not use this sstable's index)", ix)})
		}
	}
}

// markerEmpty reads a ColumnComplete marker: whether the index of this
// sstable is empty (false when it cannot say: its check reported that).
func markerEmpty(f sstable.IndexFile) bool {
	rf, err := reader.Open(f.Path, reader.Buffered)
	if err != nil {
		return false
	}
	defer rf.Close()
	fr, err := sai.Check(rf, rf.Size())
	if err != nil {
		return false
	}
	empty, _ := sai.ColumnCompleteEmpty(rf, fr)
	return empty
}

// checkSASI checks one SASI file against the sstable.
func checkSASI(s *sstable.SSTable, r *Report, f sstable.IndexFile) {
	who := "SASI index " + f.Index
	b, err := reader.ReadFile(f.Path)
	if err != nil {
		indexProblem(r, f, -1, fmt.Sprintf("%s: %v", who, err))
		return
	}
	sst := sasi.Sstable{}
	if s.Partitioner() == token.Murmur3 {
		sst.Token = func(k []byte) int64 { return token.Murmur3.Token(k).Int64() }
		if s.Index() != nil {
			sst.KeyToken = func(pos int64) (int64, error) {
				sc := index.NewScanner(s.Index(), s.IndexCodec(), pos, false)
				if !sc.Next() {
					if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
						return 0, fmt.Errorf("%w: %v", sasi.ErrNoKey, err)
					}
					return 0, sasi.ErrNoKey
				}
				return token.Murmur3.Token(sc.Entry().Key).Int64(), nil
			}
		}
	}
	if _, err := sasi.Check(b, sst); err != nil {
		if ce, ok := corrupt.As(err); ok {
			indexProblem(r, f, ce.Offset, fmt.Sprintf("%s is damaged: %s (SASI stores no checksum; Cassandra reads it as it is)", who, corruptText(ce)))
			return
		}
		indexProblem(r, f, -1, fmt.Sprintf("%s: %v", who, err))
	}
}
