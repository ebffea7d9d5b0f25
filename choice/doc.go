// Package choice is the shape of a closed list of alternatives that a user
// picks one of by name, on the command line or in a tasks file: search
// strategies (package search), cost models (costmodel), task schedulers
// (tasks). Each of those packages declares its own Kind and the list of its
// kinds; a [List] gives every such list the same order (the default first),
// the same lookup and the same error, naming the alternatives there are.
//
// It is a leaf package: the packages that declare the lists import nothing
// else in common.
package choice
