package vfs

import (
	"fmt"
	"io/fs"
)

// Owner is the mode and owner a new file takes from the file it replaces
// or stands beside (an sstable's rewrite, a Statistics.db rewritten, a
// transaction log in a table directory), so that Cassandra, running as
// its own user, can still read and delete it after a run as root.
type Owner struct {
	Mode     fs.FileMode
	UID, GID int // -1: unknown (a system without them)
}

// OwnerOf is the mode and owner of the file fi describes.
func OwnerOf(fi fs.FileInfo) Owner {
	o := Owner{Mode: fi.Mode().Perm(), UID: -1, GID: -1}
	if uid, gid, ok := fileOwner(fi); ok {
		o.UID, o.GID = uid, gid
	}
	return o
}

// Give gives f the mode and, where they differ and the process may, the
// owner.
func (o Owner) Give(f File) error {
	if err := f.Chmod(o.Mode); err != nil {
		return fmt.Errorf("chmod %s: %w", f.Name(), err)
	}
	if o.UID < 0 {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if uid, gid, ok := fileOwner(fi); ok && uid == o.UID && gid == o.GID {
		return nil
	}
	if err := f.Chown(o.UID, o.GID); err != nil {
		return fmt.Errorf("giving %s the owner of the file it replaces (uid %d, gid %d): %w", f.Name(), o.UID, o.GID, err)
	}
	return nil
}
