package main

// The ops autotune ships register themselves in package kernels.
import _ "github.com/autotune-dev/autotune/kernels/all"
