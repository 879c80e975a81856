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
		unreadCommand(),
		channelsCommand(),
		agentsCommand(),
		showCommand(),
		deleteCommand(),
		purgeCommand(),
		migrateCommand(),
		importCommand(),
		exportCommand(),
		sessionsCommand(),
		gcCommand(),
		statsCommand(),
		backupCommand(),
		restoreCommand(),
		configCommand(),
		embedCommand(),
		modelCommand(),
		checkCommand(),
		rebuildCommand(),
		setupCommand(),
		hookCommand(),
		serveCommand(),
		mcpCommand(),
		demoCommand(),
		versionCommand(),
		completionCommand(),
	}
}
