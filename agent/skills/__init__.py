"""Skills: `skills/<category>/<name>/SKILL.md` packages the agent reads from `/mnt/skills`."""
