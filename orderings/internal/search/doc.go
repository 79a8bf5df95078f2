// Package search holds the offline searches (strip, cyclic and split)
// whose results orderings stores as tierflow candidates, and the
// generators that write them to orderings' table files.
package search
