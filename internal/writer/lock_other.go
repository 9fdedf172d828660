//go:build !unix

package writer

import "os"

// lockDir opens dir; without flock there is no lock, so tryLockDir never
// claims another run's staging directory.
func lockDir(dir string) (*os.File, error) { return os.Open(dir) }

// tryLockDir reports every staging directory as owned: where a dead
// owner cannot be told from a live one, nothing is removed.
func tryLockDir(string) (*os.File, error) { return nil, nil }
