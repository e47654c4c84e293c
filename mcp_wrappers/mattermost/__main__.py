from mcp_wrappers.mattermost.server import main

main()
