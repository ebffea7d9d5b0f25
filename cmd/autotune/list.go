package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
)

var listCommand = command{
	name:    "list",
	summary: "list the ops, their shapes and knobs, and the devices",
	help: `
Usage: autotune list [--json]

Lists the operators autotune knows (with their shape form and, once a
template exists, their knobs) and the devices it can target: this machine's
CPU with its ISA and caches, and the CUDA architectures with their limits.

Examples:
  autotune list
  autotune list --json | jq '.devices[] | select(.name == "sm_86")'
`,
	run: runList,
}

// listOp and listDevice are the JSON form of list's output.
type listOp struct {
	Name     string   `json:"name"`
	Shape    string   `json:"shape"`
	Summary  string   `json:"summary"`
	DTypes   []string `json:"dtypes"` // element types the op has kernels of
	Template bool     `json:"template"`
	KnobsFor string   `json:"knobs_for_shape,omitempty"` // knob values depend on the shape
	Knobs    []string `json:"knobs"`
}

type listDevice struct {
	Name        string      `json:"name"`
	Resolves    string      `json:"resolves_to,omitempty"`
	Fingerprint string      `json:"fingerprint"`
	CPU         *listCPU    `json:"cpu,omitempty"`
	GPU         *listLimits `json:"cuda,omitempty"`
}

type listCPU struct {
	Model   string `json:"model"`
	Cores   int    `json:"cores"`
	ISA     string `json:"isa"`
	L1DByte int    `json:"l1d_bytes"`
	L2Byte  int    `json:"l2_bytes"`
	L3Byte  int    `json:"l3_bytes"`
	// CacheSource is "sysfs", "cpuid", or "" when neither said and templates assume sizes.
	CacheSource string `json:"cache_source"`
}

type listLimits struct {
	MaxThreadsPerBlock     int `json:"max_threads_per_block"`
	SharedMemPerBlock      int `json:"shared_mem_per_block"`
	SharedMemPerBlockOptin int `json:"shared_mem_per_block_optin"`
	SharedMemPerSM         int `json:"shared_mem_per_sm"`
	RegistersPerSM         int `json:"registers_per_sm"`
	RegistersPerBlock      int `json:"registers_per_block"`
	MaxRegistersPerThread  int `json:"max_registers_per_thread"`
	WarpSize               int `json:"warp_size"`
	MaxBlocksPerSM         int `json:"max_blocks_per_sm"`
	MaxWarpsPerSM          int `json:"max_warps_per_sm"`
}

func newListDevice(name string, t device.Target) listDevice {
	d := listDevice{Name: name, Fingerprint: t.Fingerprint()}
	if name == "auto" {
		d.Resolves = t.Name
		return d
	}
	if c := t.CPU; c != nil {
		d.CPU = &listCPU{Model: c.Model, Cores: c.Cores, ISA: c.ISA.String(), L1DByte: c.L1D, L2Byte: c.L2, L3Byte: c.L3,
			CacheSource: string(c.CacheSource)}
	}
	if t.GPU != nil {
		l := listLimits(t.GPU.Limits) // same fields, in the same order
		d.GPU = &l
	}
	return d
}

func runList(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	asJSON := fs.Bool("json", false, "print one JSON object with ops and devices")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var ops []listOp
	for _, op := range kernels.Ops() {
		lo := listOp{Name: op.Name, Shape: op.ShapeForm(), Summary: op.Summary, Knobs: []string{}}
		for _, dt := range op.DTypesOrDefault() {
			lo.DTypes = append(lo.DTypes, string(dt))
		}
		if tmpl, ok := kernels.TemplateFor(op.Name, kernels.CPU); ok {
			// Knob values depend on the shape and target: show the example's on this CPU.
			shape, err := op.ParseShape(op.Example)
			if err != nil {
				return err // the examples are ours; this is a bug
			}
			lo.Template, lo.KnobsFor = true, op.Example
			for _, k := range tmpl.Space(shape, device.Host()).Knobs() {
				lo.Knobs = append(lo.Knobs, k.String())
			}
		}
		ops = append(ops, lo)
	}
	var devs []listDevice
	for _, name := range device.Names() {
		t, err := lookupDevice(name)
		if err != nil {
			return err // the names come from device itself; this is a bug
		}
		devs = append(devs, newListDevice(name, t))
	}
	if *asJSON {
		return writeJSON(std, struct {
			Ops     []listOp     `json:"ops"`
			Devices []listDevice `json:"devices"`
		}{ops, devs})
	}

	tw := tabwriter.NewWriter(std.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OP\tSHAPE\tDTYPES\tDESCRIPTION")
	for _, op := range ops {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", op.Name, op.Shape, strings.Join(op.DTypes, ","), op.Summary)
		if !op.Template {
			fmt.Fprintf(tw, "\t\t\tno template yet: cannot be tuned\n")
			continue
		}
		fmt.Fprintf(tw, "\t\t\tknobs (values for %s on this CPU):\n", op.KnobsFor)
		for _, k := range op.Knobs {
			fmt.Fprintf(tw, "\t\t\t  %s\n", k)
		}
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "DEVICE\tDESCRIPTION")
	for _, d := range devs {
		fmt.Fprintf(tw, "%s\t%s\n", d.Name, describe(d))
	}
	return tw.Flush()
}

// describe is the one-line description of a device in list's table.
func describe(d listDevice) string {
	switch {
	case d.Resolves != "":
		return "the local GPU when one is usable, else the CPU; here: " + d.Resolves
	case d.CPU != nil:
		c := d.CPU
		source := "caches from " + c.CacheSource
		if c.CacheSource == "" {
			source = "cache sizes unknown: templates assume 32 KiB L1d, 256 KiB L2, no L3"
		}
		return fmt.Sprintf("%s, %d logical cores, %s, L1d %s, L2 %s, L3 %s (%s)",
			c.Model, c.Cores, c.ISA, kib(c.L1DByte), kib(c.L2Byte), kib(c.L3Byte), source)
	case d.GPU != nil:
		g := d.GPU
		return fmt.Sprintf("CUDA: %d threads/block, smem %s/block (%s opt-in), %s/SM, %d regs/SM, ≤%d regs/thread, ≤%d blocks and %d warps/SM",
			g.MaxThreadsPerBlock, kib(g.SharedMemPerBlock), kib(g.SharedMemPerBlockOptin), kib(g.SharedMemPerSM),
			g.RegistersPerSM, g.MaxRegistersPerThread, g.MaxBlocksPerSM, g.MaxWarpsPerSM)
	}
	return ""
}

// kib formats a byte count the way cache and memory sizes are usually quoted.
func kib(n int) string {
	switch {
	case n == 0:
		return "unknown"
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// writeJSON prints v as one line of JSON.
func writeJSON(std *stdio, v any) error {
	return json.NewEncoder(std.out).Encode(v)
}
