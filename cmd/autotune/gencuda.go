package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/autotune-dev/autotune/gen"
	"github.com/autotune-dev/autotune/gen/gocuda"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure/cuda/driver"
	"github.com/autotune-dev/autotune/measure/cuda/emu"
)

// genCUDA writes the Go package of CUDA kernels for archs (gen --device
// sm_80,...).
func genCUDA(ctx context.Context, std *stdio, src gen.Source, o gocuda.Options, out string) error {
	c, err := ptxCompiler(ctx)
	if err != nil {
		return err
	}
	o.Compiler = c
	fmt.Fprintf(std.errs, "autotune gen: compiling to PTX with %s\n", c.Name())
	files, err := gocuda.Generate(ctx, src, o)
	if err != nil {
		return err
	}
	written, removed, err := gen.Write(out, files)
	if err != nil {
		return err
	}
	fmt.Fprintf(std.errs, "autotune gen: %d files in %s: %d written, %d unchanged, %d removed\n",
		len(files), out, len(written), len(files)-len(written), len(removed))
	return nil
}

// ptxCompiler returns NVRTC when it loads, else clang, as autotune check's
// PTX check runs it; an error when neither is here.
func ptxCompiler(ctx context.Context) (gocuda.Compiler, error) {
	if n, err := driver.OpenNVRTC(); err == nil {
		v, err := n.Version()
		if err == nil {
			return nvrtcPTX{n, "NVRTC " + v}, nil
		}
	}
	clang, err := emu.FindClang()
	if err != nil {
		return nil, fmt.Errorf("no CUDA compiler: neither NVRTC (libnvrtc) nor %w", err)
	}
	name := clang
	if b, err := exec.CommandContext(ctx, clang, "--version").Output(); err == nil {
		name, _, _ = strings.Cut(strings.TrimSpace(string(b)), "\n")
	}
	return clangPTX{clang, name}, nil
}

type nvrtcPTX struct {
	n    *driver.NVRTC
	name string
}

func (c nvrtcPTX) PTX(_ context.Context, k kernels.CUDAKernel, arch string) ([]byte, error) {
	p, err := c.n.Compile(k.Source, k.Entry+".cu", "compute_"+strings.TrimPrefix(arch, "sm_"))
	if err != nil {
		return nil, err
	}
	if len(p.PTX) == 0 {
		return nil, errors.New("NVRTC gave no PTX")
	}
	return p.PTX, nil
}

func (c nvrtcPTX) Name() string { return c.name }

type clangPTX struct{ path, name string }

func (c clangPTX) PTX(ctx context.Context, k kernels.CUDAKernel, arch string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "autotune-gen-ptx-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	return emu.PTX(ctx, c.path, k, arch, dir)
}

func (c clangPTX) Name() string { return c.name }
