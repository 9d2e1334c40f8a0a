import BadgeMain

await BadgeMain.run()
