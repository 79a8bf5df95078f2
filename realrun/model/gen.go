package model

//go:generate go run ./internal/asmgen -out asm_amd64.s -stubs asm_amd64.go -pkg model
