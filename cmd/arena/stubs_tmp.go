package main

import "github.com/urfave/cli/v2"

func rulesCommand() *cli.Command { return &cli.Command{Name: "rules", Hidden: true} }
func matchCommand() *cli.Command { return &cli.Command{Name: "match", Hidden: true} }
