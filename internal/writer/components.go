package writer

import (
	"fmt"

	"github.com/sstabletool/sstabletool/format"
)

// SmallComponents lists the components an sstable writer writes whole once
// Data.db and the index are streamed, in the order it writes them:
// Statistics.db, the index writer's in-memory components (Summary.db),
// Filter.db, Digest.crc32 of Data.db, then CompressionInfo.db for a
// compressed Data.db or CRC.db for an uncompressed one. This is the one
// place that knows that set; the sstable writer and convert both use it.
func SmallComponents(v format.Version, statistics []byte, index []Component, filter []byte, dr *DataResult) ([]Component, error) {
	out := []Component{{Name: format.ComponentStatistics, Bytes: statistics}}
	out = append(out, index...)
	out = append(out,
		Component{Name: format.ComponentFilter, Bytes: filter},
		Component{Name: format.ComponentDigest, Bytes: DigestText(dr.Digest)})
	if dr.Info != nil {
		ci := dr.Info.Encode(v.HasMaxCompressedLength)
		if ci == nil {
			return nil, fmt.Errorf("writer: CompressionInfo.db: %v", dr.Info.Validate())
		}
		return append(out, Component{Name: format.ComponentCompressionInfo, Bytes: ci}), nil
	}
	return append(out, Component{Name: format.ComponentCRC, Bytes: dr.Checksums.Encode()}), nil
}

// TOCFor lists an sstable's components for TOC.txt (TOC.txt included):
// those srcTOC lists, in its order (a conversion keeps the source's, which
// Cassandra wrote from a hash set), then the rest in the order Cassandra 5.0
// lists them (TOCOrder).
func TOCFor(srcTOC, components []string) []string {
	have := map[string]bool{format.ComponentTOC: true}
	for _, c := range components {
		have[c] = true
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range srcTOC {
		if have[c] && !seen[c] {
			out = append(out, c)
			seen[c] = true
		}
	}
	for _, c := range TOCOrder(append([]string{format.ComponentTOC}, components...)) {
		if !seen[c] {
			out = append(out, c)
			seen[c] = true
		}
	}
	return out
}
