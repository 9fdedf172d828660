package rows

// SlowOnly turns the decoder's fast paths off, for the external tests that
// compare them with the general path.
func SlowOnly(d *Decoder) { d.slowOnly = true }
