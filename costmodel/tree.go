package costmodel

import (
	"slices"
	"sort"
)

// tree is one regression tree, its nodes in an array with the root first
// and every child after its parent (which MarshalBinary relies on).
type tree struct {
	nodes []node
}

type node struct {
	feature   int32   // the feature split on; -1 for a leaf
	left      int32   // child for x[feature] < threshold
	right     int32   // child for the rest
	threshold float64 // split point, between two training values
	value     float64 // a leaf's contribution, learning rate included
	bin       uint8   // training only: rows with bin <= this go left
}

func (t *tree) predict(x []float64) float64 {
	i := int32(0)
	for {
		nd := &t.nodes[i]
		if nd.feature < 0 {
			return nd.value
		}
		if x[nd.feature] < nd.threshold {
			i = nd.left
		} else {
			i = nd.right
		}
	}
}

// predictBinned is predict for training row i, through its bins: the same
// path, since x < edges[k] exactly when bin(x) <= k.
func (t *tree) predictBinned(b *binned, i int) float64 {
	n := int32(0)
	for {
		nd := &t.nodes[n]
		if nd.feature < 0 {
			return nd.value
		}
		if b.bins[nd.feature][i] <= nd.bin {
			n = nd.left
		} else {
			n = nd.right
		}
	}
}

// binned holds the training rows' features quantized to at most maxBins
// values each: a split is a choice of feature and bin boundary.
type binned struct {
	edges  [][]float64 // per feature: ascending split points; bin(x) = #edges <= x
	bins   [][]uint8   // per feature, per row
	offset []int       // per feature: its first histogram slot
	total  int         // histogram slots over all features
}

func binFeatures(rows []Sample, width int) *binned {
	b := &binned{
		edges:  make([][]float64, width),
		bins:   make([][]uint8, width),
		offset: make([]int, width),
	}
	col := make([]float64, len(rows))
	for f := range width {
		for i, r := range rows {
			col[i] = r.Features[f]
		}
		u := slices.Compact(slices.Sorted(slices.Values(col)))
		var edges []float64
		if len(u) <= maxBins {
			for j := 1; j < len(u); j++ {
				edges = append(edges, mid(u[j-1], u[j]))
			}
		} else {
			// Too many distinct values: boundaries at quantiles of them.
			for k := 1; k < maxBins; k++ {
				j := k * len(u) / maxBins
				edges = append(edges, mid(u[j-1], u[j]))
			}
		}
		edges = slices.Compact(edges) // midpoints of adjacent floats can coincide
		b.edges[f] = edges
		b.bins[f] = make([]uint8, len(rows))
		for i, x := range col {
			b.bins[f][i] = uint8(sort.Search(len(edges), func(k int) bool { return edges[k] > x }))
		}
		b.offset[f] = b.total
		b.total += len(edges) + 1
	}
	return b
}

func mid(a, b float64) float64 { return a/2 + b/2 }

type histBin struct {
	grad, hess float64
	n          int
}

// builder grows one tree on a subset of rows from their gradients and
// hessians, depth first. Each node gets its rows' histogram from its parent:
// the parent builds the smaller child's and subtracts it from its own for
// the larger one, so a level costs at most half a pass over its rows.
type builder struct {
	bins       *binned
	grad, hess []float64
	opts       Options
	hists      [][2][]histBin // per depth: the left and right child's histogram
	nodes      []node
}

func newBuilder(bins *binned, grad, hess []float64, opts Options) *builder {
	b := &builder{bins: bins, grad: grad, hess: hess, opts: opts, hists: make([][2][]histBin, opts.Depth+1)}
	for d := range b.hists {
		b.hists[d] = [2][]histBin{make([]histBin, bins.total), make([]histBin, bins.total)}
	}
	return b
}

func (b *builder) grow(rows []int32) tree {
	b.nodes = nil
	h := b.hists[0][0]
	b.histogram(h, rows)
	b.node(rows, h, 0)
	return tree{nodes: slices.Clone(b.nodes)}
}

// histogram fills h with the gradient sums of rows per feature and bin.
func (b *builder) histogram(h []histBin, rows []int32) {
	clear(h)
	for f, col := range b.bins.bins {
		hf := h[b.bins.offset[f]:]
		for _, i := range rows {
			e := &hf[col[i]]
			e.grad += b.grad[i]
			e.hess += b.hess[i]
			e.n++
		}
	}
}

// node appends the subtree for rows, whose histogram is h, and returns its
// index.
func (b *builder) node(rows []int32, h []histBin, depth int) int32 {
	var G, H float64
	for _, i := range rows {
		G += b.grad[i]
		H += b.hess[i]
	}
	at := int32(len(b.nodes))
	b.nodes = append(b.nodes, node{feature: -1, value: -G / (H + lambda) * b.opts.LearningRate})
	if depth >= b.opts.Depth || len(rows) < 2*b.opts.MinLeaf {
		return at
	}
	f, k, ok := b.split(h, len(rows), G, H)
	if !ok {
		return at
	}
	// Partition rows in place: bin <= k first.
	col := b.bins.bins[f]
	l := 0
	for r, i := range rows {
		if col[i] <= k {
			rows[l], rows[r] = rows[r], rows[l]
			l++
		}
	}
	hl, hr := b.hists[depth+1][0], b.hists[depth+1][1]
	small, large := hl, hr
	if l <= len(rows)-l {
		b.histogram(small, rows[:l])
	} else {
		small, large = hr, hl
		b.histogram(small, rows[l:])
	}
	for j := range large {
		large[j] = histBin{h[j].grad - small[j].grad, h[j].hess - small[j].hess, h[j].n - small[j].n}
	}
	left := b.node(rows[:l], hl, depth+1)
	right := b.node(rows[l:], hr, depth+1)
	b.nodes[at] = node{feature: int32(f), left: left, right: right, threshold: b.bins.edges[f][k], bin: k}
	return at
}

// split returns the feature and bin boundary with the largest gain in the
// penalised loss, if any improves it and leaves MinLeaf rows on each side.
func (b *builder) split(h []histBin, n int, G, H float64) (feature int, bin uint8, ok bool) {
	parent := G * G / (H + lambda)
	best := 1e-12 * (1 + parent) // a gain must beat rounding noise
	for f, edges := range b.bins.edges {
		hf := h[b.bins.offset[f] : b.bins.offset[f]+len(edges)+1]
		var gl, hl float64
		nl := 0
		for k := range edges {
			gl += hf[k].grad
			hl += hf[k].hess
			nl += hf[k].n
			if nl < b.opts.MinLeaf {
				continue
			}
			if n-nl < b.opts.MinLeaf {
				break
			}
			gr, hr := G-gl, H-hl
			gain := gl*gl/(hl+lambda) + gr*gr/(hr+lambda) - parent
			if gain > best {
				best, feature, bin, ok = gain, f, uint8(k), true
			}
		}
	}
	return feature, bin, ok
}
