// Package amd64 is the amd64 part of the Go packages that package gen
// writes for the CPU: everything in them that knows x86, so that gen's
// planning (winners, generic variants, exact → nearest → default) and its
// writer of dispatch, tests and docs stay free of it.
//
// A config the tuner chose may need vector instructions: the CPU
// templates' "vec" knob is a vector width in float32 lanes
// (kernels.VectorConstraints), 8 for AVX2 and FMA, 16 for AVX-512. A
// generated package compiles such a config three ways, and Forms says
// which: as tuned, under SIMDTag, installed at start-up when the CPU has
// its Level (Level.SIMDCond); as its scalar form, which every build has;
// and, when the config calls Go assembly (kernels.GoEmitter.Asm), in its
// plain form (kernels.AMD64Plain) under PlainTag, installed when the CPU
// has the level by the package's own CPU detection (Level.PlainCond,
// CPUFiles).
//
// It is a package of gen's rather than a part of the templates: the
// templates (package kernels) describe kernels for an architecture, while
// build tags, run-time CPU detection and the choice among compiled forms
// are how a generated package ships them. gen/arm64, beside this one, is
// the arm64 writer.
package amd64
