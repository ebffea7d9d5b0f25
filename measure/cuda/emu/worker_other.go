//go:build !linux

package emu

import (
	"fmt"
	"runtime"
)

func serve(j job) (reply, error) {
	return reply{}, fmt.Errorf("the CUDA emulator runs on Linux only, not %s", runtime.GOOS)
}
