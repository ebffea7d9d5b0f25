// Package onednn asks oneDNN, in this process, whether it has a primitive
// for a data type on this CPU, before a bench times a baseline built on
// it: oneDNN 2 has bf16 primitives only from AVX-512 on (none under
// ONEDNN_MAX_CPU_ISA=AVX2) and f16 ones only on CPUs with AVX512-FP16,
// and a baseline whose primitive is missing would abort the bench's
// harness. The baselines' Skip functions (kernels.Baseline.Skip) call it.
//
// It exists only in builds with the onednn build tag (cgo and Debian's
// libdnnl-dev); without the tag the package is empty. oneDNN reads
// ONEDNN_MAX_CPU_ISA once, at its first use in a process, so a process
// that probes must have it set as the harness that runs the baselines
// will (autotune bench does).
package onednn
