//go:build !unix

package tunedb

// alive cannot tell here: a claim then lasts its whole lease.
func alive(pid int) bool { return true }
