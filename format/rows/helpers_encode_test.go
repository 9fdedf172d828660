package rows_test

import (
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
)

var liveDT = deletiontime.Live

func mustV(n string) format.Version { return format.MustVersion(n) }

// normalize clears what an encoding may choose freely: positions, sizes,
// flags implied by the content, and cell flags other than deleted/expiring.
func normalize(u *rows.Unfiltered) *rows.Unfiltered {
	u.Offset, u.Size, u.PrevSize, u.Flags = 0, 0, 0, 0
	u.ExtFlags &= rows.ExtFlagIsStatic // unknown bits are not content; Shadowable is compared
	// A complex column present with no cells and no deletion carries no
	// data (Cassandra never writes one); the encoder leaves it out.
	u.ColumnsPresent = 0
	for i := range u.Cells {
		u.Cells[i].Flags &= rows.CellFlagDeleted | rows.CellFlagExpiring
		if len(u.Cells[i].Value) == 0 {
			u.Cells[i].Value = []byte{}
		}
	}
	if len(u.Bound.Values) == 0 {
		u.Bound.Values = nil
	}
	if len(u.Clustering) == 0 {
		u.Clustering = nil
	}
	if len(u.Cells) == 0 {
		u.Cells = nil
	}
	if len(u.ComplexDeletions) == 0 {
		u.ComplexDeletions = nil
	}
	return u
}
