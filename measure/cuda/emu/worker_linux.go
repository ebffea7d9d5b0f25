package emu

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/autotune-dev/autotune/measure/cuda/driver"
)

// guarded is a buffer of n elements of size bytes placed at the end of a
// mapping, 16-byte aligned, between pages without access: an access before
// it or more than its alignment slack past it faults. The slack is filled
// with poison and checked after each launch.
type guarded struct {
	name string
	mem  []byte // the whole mapping
	data []byte
	end  int // offset of the upper guard page in mem
	off  int // offset of data in mem
}

func newGuarded(name string, n, size int) (*guarded, error) {
	page := syscall.Getpagesize()
	bytes := (size*n + 15) / 16 * 16
	pages := (bytes + page - 1) / page
	mem, err := syscall.Mmap(-1, 0, (pages+2)*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", name, err)
	}
	g := &guarded{name: name, mem: mem, end: (pages + 1) * page}
	if err := syscall.Mprotect(mem[:page], syscall.PROT_NONE); err != nil {
		return nil, err
	}
	if err := syscall.Mprotect(mem[g.end:], syscall.PROT_NONE); err != nil {
		return nil, err
	}
	g.off = g.end - bytes
	g.data = mem[g.off : g.off+size*max(n, 0)]
	g.poisonSlack()
	return g, nil
}

// poison fills outputs before each launch and the slack past every buffer:
// a word of it is NaN as float32, bf16 and f16 alike.
const poison = 0xff

func (g *guarded) poisonSlack() {
	for i := g.off + len(g.data); i < g.end; i++ {
		g.mem[i] = poison
	}
}

// slackWritten reports whether something wrote past the data.
func (g *guarded) slackWritten() bool {
	for i := g.off + len(g.data); i < g.end; i++ {
		if g.mem[i] != poison {
			return true
		}
	}
	return false
}

func (g *guarded) addr() uintptr { return uintptr(unsafe.Pointer(&g.mem[g.off])) }

func (g *guarded) free() { syscall.Munmap(g.mem) }

func serve(j job) (reply, error) {
	lib, err := purego.Dlopen(j.Lib, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return reply{}, fmt.Errorf("loading %s: %w", filepath.Base(j.Lib), err)
	}
	var launch func(args unsafe.Pointer, geom *int64, msg *byte, msglen int64) int32
	var region func(name *byte, lo, hi uint64)
	for _, s := range []struct {
		f    any
		name string
	}{{&launch, "autotune_emu_launch"}, {&region, "autotune_emu_region"}} {
		sym, err := purego.Dlsym(lib, s.name)
		if err != nil || sym == 0 {
			return reply{}, fmt.Errorf("%s has no %s", filepath.Base(j.Lib), s.name)
		}
		purego.RegisterFunc(s.f, sym)
	}

	size := cmp.Or(j.ElemSize, 4)
	out, err := newGuarded("out", j.OutLen, size)
	if err != nil {
		return reply{}, err
	}
	defer out.free()
	bufs := []*guarded{out}
	for i, n := range j.InLens {
		in, err := newGuarded(fmt.Sprintf("in%d", i), n, size)
		if err != nil {
			return reply{}, err
		}
		defer in.free()
		x, err := readFile(filepath.Join(j.Dir, inputFile(i)), n, size)
		if err != nil {
			return reply{}, err
		}
		copy(in.data, x)
		bufs = append(bufs, in)
	}
	var names [][]byte // kept alive: emu.h keeps the pointers for its fault messages
	for _, b := range bufs {
		name := append([]byte(b.name), 0)
		names = append(names, name)
		region(&name[0], uint64(b.addr()), uint64(b.addr())+uint64(len(b.data)))
	}
	args := []any{driver.Ptr(out.addr())}
	for _, b := range bufs[1:] {
		args = append(args, driver.Ptr(b.addr()))
	}
	for _, d := range j.Extents {
		args = append(args, d)
	}

	var r reply
	msg := make([]byte, 4096)
	for i, o := range j.Orders {
		bm, ok1 := orderModes[o.Blocks]
		tm, ok2 := orderModes[o.Threads]
		if !ok1 || !ok2 {
			return reply{}, fmt.Errorf("unknown order %v", o)
		}
		for k := range out.data {
			out.data[k] = poison
		}
		geom := [11]int64{int64(j.Grid[0]), int64(j.Grid[1]), int64(j.Grid[2]),
			int64(j.Block[0]), int64(j.Block[1]), int64(j.Block[2]), int64(j.SharedBytes), bm, tm, int64(j.Seed), 0}
		var pin runtime.Pinner
		params := driver.Params(&pin, args...)
		code := launch(params, &geom[0], &msg[0], int64(len(msg)))
		pin.Unpin()
		runtime.KeepAlive(names)
		switch code {
		case 0:
		case 2:
			r.FloatAtomics = true
		default:
			r.Error, r.Order = goString(msg), i
			return r, nil
		}
		for _, b := range bufs {
			if b.slackWritten() {
				r.Wrote, r.Order = b.name, i
				return r, nil
			}
		}
		if err := os.WriteFile(filepath.Join(j.Dir, outputFile(i)), out.data, 0o644); err != nil {
			return reply{}, err
		}
	}
	return r, nil
}

func goString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
