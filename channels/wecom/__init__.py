"""WeCom (企业微信) intelligent robot on wecom-aibot-python-sdk: its long WebSocket connection
for messages in and replies out (streaming), template cards, media in and out."""
