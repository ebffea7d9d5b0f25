package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/autotune-dev/autotune/measure/cuda"
	"github.com/autotune-dev/autotune/measure/cuda/driver"
)

// benchCUDA is bench on a CUDA target. It needs the driver with a GPU and
// NVRTC, and says which is missing. The comparison itself (the tuned
// kernel against a device-to-device copy floor and, for GEMM, cuBLAS,
// interleaved and timed with CUDA events) is not written yet: it could
// not be run where this was written.
func benchCUDA(w workload) error {
	var missing []string
	if _, err := cuda.Detect(""); err != nil {
		missing = append(missing, "a CUDA driver with a GPU ("+err.Error()+")")
	}
	if _, err := driver.OpenNVRTC(); err != nil {
		missing = append(missing, "NVRTC ("+err.Error()+")")
	}
	if len(missing) > 0 {
		return fmt.Errorf("bench --device %s needs %s", w.target.Name, strings.Join(missing, " and "))
	}
	return errors.New("bench on a GPU is not written yet: tune on it ('autotune tune') and compare with the figures of docs/benchmarks.md")
}
