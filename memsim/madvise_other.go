//go:build !linux

package memsim

func adviseHuge[T any](s []T) {}
