package main

// commands returns the subcommand table, in the order help lists them.
// One file per subcommand; add a line here for a new one.
func commands() []*command {
	return []*command{
		initCommand(),
		noteCommand(),
		postCommand(),
		searchCommand(),
		notesCommand(),
		channelsCommand(),
		agentsCommand(),
		showCommand(),
		importCommand(),   // issue 8 (lifecycle)
		exportCommand(),   // issue 8
		sessionsCommand(), // issue 8
		gcCommand(),       // issue 8
		statsCommand(),    // issue 8
		backupCommand(),   // issue 8
		restoreCommand(),  // issue 8
		configCommand(),   // issue 8
		embedCommand(),    // issue 5
		modelCommand(),    // issue 5
		checkCommand(),    // issue 6
		rebuildCommand(),  // issue 6
		serveCommand(),
		mcpCommand(),
		demoCommand(),
		versionCommand(),
	}
}
