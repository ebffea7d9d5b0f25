//go:build windows || plan9 || solaris || aix || android

package tunedb

import "os"

// unlock is a no-op where bbolt does not use flock; closing f is all there is.
func unlock(*os.File) {}
