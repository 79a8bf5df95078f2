// Package docs holds the project's documentation (tutorial, guides, design,
// generated command reference) and the tests that keep it true: links
// resolve, the reference matches the commands' help, and the design
// diagram matches the imports.
package docs
