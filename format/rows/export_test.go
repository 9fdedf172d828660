package rows

// SlowRowsOnly lets the external tests turn the row body fast path off.
var SlowRowsOnly = &slowRowsOnly
