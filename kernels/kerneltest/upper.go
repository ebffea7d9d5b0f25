package kerneltest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
)

// CheckGoroutinesClear emits each config of tmpl for shape on target, both
// specialised and shape-generic, and checks the
// goroutines the kernel starts. A vector config (its vec knob above 1)
// must end every goroutine's function with archsimd.ClearAVXUpperBits():
// archsimd code leaves the upper halves of the vector registers dirty, and
// scalar Go that runs next on the goroutine's thread is then several times
// slower. A scalar config must not import archsimd at all, since it builds
// without GOEXPERIMENT=simd. Each config must start goroutines (threads >
// 1), or there would be nothing to check.
func CheckGoroutinesClear(t *testing.T, tmpl *kernels.Template, target device.Target, shape string, configs ...string) {
	t.Helper()
	sh, err := tmpl.Op.ParseShape(shape)
	if err != nil {
		t.Fatal(err)
	}
	sp := tmpl.Space(sh, target)
	for _, c := range configs {
		cfg, err := sp.Parse(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := sp.Check(cfg); err != nil {
			t.Fatal(err)
		}
		vector := cfg.Int("vec") > 1
		specialised, generic := golang.NewFile("kernels"), golang.NewFile("kernels")
		tmpl.Go.EmitGo(specialised, kernels.Kernel{Name: "K", Shape: sh, Config: cfg, Arch: kernels.AMD64})
		tmpl.Go.EmitGo(generic, kernels.Kernel{Name: "K", Config: cfg, Arch: kernels.AMD64})
		for _, e := range []struct {
			kind string
			f    *jen.File
		}{{"specialised", specialised}, {"generic", generic}} {
			kind := e.kind
			src, err := golang.Render(e.f)
			if err != nil {
				t.Fatal(err)
			}
			file, err := parser.ParseFile(token.NewFileSet(), "k.go", src, 0)
			if err != nil {
				t.Fatalf("%s %s: %v", kind, c, err)
			}
			imports := false
			for _, imp := range file.Imports {
				if p, _ := strconv.Unquote(imp.Path.Value); p == golang.ArchSIMD {
					imports = true
				}
			}
			if !vector && imports {
				t.Errorf("%s code of the scalar config %s imports %s", kind, c, golang.ArchSIMD)
			}
			bodies := goroutines(file)
			if len(bodies) == 0 {
				t.Errorf("%s code of %s starts no goroutine: a config with threads > 1 must", kind, c)
			}
			if !vector {
				continue
			}
			for _, body := range bodies {
				if !endsClearing(body) {
					t.Errorf("%s code of %s starts a goroutine whose function does not end with archsimd.ClearAVXUpperBits()", kind, c)
				}
			}
		}
	}
}

// goroutines returns the bodies of the function literals a file starts as
// goroutines: go func() {…}() and wg.Go(func() {…}).
func goroutines(file *ast.File) []*ast.BlockStmt {
	var bodies []*ast.BlockStmt
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			if lit, ok := n.Call.Fun.(*ast.FuncLit); ok {
				bodies = append(bodies, lit.Body)
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Go" && len(n.Args) == 1 {
				if lit, ok := n.Args[0].(*ast.FuncLit); ok {
					bodies = append(bodies, lit.Body)
				}
			}
		}
		return true
	})
	return bodies
}

// endsClearing reports whether the last statement of body is
// archsimd.ClearAVXUpperBits().
func endsClearing(body *ast.BlockStmt) bool {
	if len(body.List) == 0 {
		return false
	}
	stmt, ok := body.List[len(body.List)-1].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := stmt.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "archsimd" && sel.Sel.Name == "ClearAVXUpperBits" && len(call.Args) == 0
}
