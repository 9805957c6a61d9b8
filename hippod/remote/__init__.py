"""The model APIs hippod can call when the user turns them on: Anthropic's Messages API, and the
embedding and rerank APIs of OpenAI, Voyage and Cohere. One HTTP client path with retries
(`http.py`), each provider's address and key (`providers.py`), and a spend cap (`spend.py`)."""
