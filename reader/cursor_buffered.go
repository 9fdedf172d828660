package reader

// Buffered returns the bytes from Pos to the end of the chunk already in
// memory, without reading or copying anything (possibly none). Decoders try
// these first and fall back to Peek only when a field straddles a chunk.
func (c *Cursor) Buffered() []byte { return c.cur[c.off:] }
