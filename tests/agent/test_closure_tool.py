"""closure_tool: a builder's tools share the inferred argument schema and keep their closures."""

from __future__ import annotations

from langchain_core.tools import BaseTool, StructuredTool, tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from agent.tools.closure_tool import closure_tool


def build(prefix: str, limit: int = 3) -> BaseTool:
    def shout(text: str, times: int = limit) -> str:
        """Repeat text in capitals."""
        return " ".join([f"{prefix}{text.upper()}"] * times)

    return closure_tool(shout)


async def test_each_tool_runs_its_own_closure_with_the_schema_tool_infers() -> None:
    a, b = build("a:"), build("b:")
    assert a.args_schema is b.args_schema  # inferred once
    assert a.invoke({"text": "hi"}) == "a:HI a:HI a:HI"
    assert await b.ainvoke({"text": "hi", "times": 1}) == "b:HI"

    def shout(text: str, times: int = 3) -> str:
        """Repeat text in capitals."""
        return text

    assert convert_to_openai_tool(a) == convert_to_openai_tool(tool(shout))


def test_other_default_values_get_their_own_schema() -> None:
    three, five = build("x", 3), build("x", 5)
    assert three.args_schema is not five.args_schema
    assert convert_to_openai_tool(five)["function"]["parameters"]["properties"]["times"] == {
        "default": 5,
        "type": "integer",
    }
    assert five.invoke({"text": "o"}) == " ".join(["xO"] * 5)


async def test_a_named_coroutine_tool_matches_from_function() -> None:
    def build_async(reply: str) -> BaseTool:
        async def answer(question: str) -> str:
            return reply

        return closure_tool(answer, name="ask", description="Ask something.")

    yes, no = build_async("yes"), build_async("no")
    assert yes.args_schema is no.args_schema
    assert (await yes.ainvoke({"question": "?"}), await no.ainvoke({"question": "?"})) == (
        "yes",
        "no",
    )

    async def answer(question: str) -> str:
        return ""

    plain = StructuredTool.from_function(coroutine=answer, name="ask", description="Ask something.")
    assert convert_to_openai_tool(yes) == convert_to_openai_tool(plain)
