"""A tiny ReAct agent graph for LangGraph's API server (langgraph dev), as a Plimsoll SUT.

model → tools → model … until the model answers in text. The model is ChatOpenAI
pointed at OPENAI_BASE_URL (Plimsoll's mock); one tool, `lookup`.
"""

import os

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


@tool
def lookup(query: str) -> str:
    """Look up a short fact about the query."""
    return f"fact about {query}: the tide is steady"


llm = ChatOpenAI(
    model=os.environ.get("AGENT_MODEL", "gpt-4o-mini"),
    base_url=os.environ["OPENAI_BASE_URL"],
    api_key=os.environ.get("OPENAI_API_KEY", "x"),
    streaming=False,
).bind_tools([lookup])


async def call_model(state: MessagesState):
    return {"messages": [await llm.ainvoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("model", call_model)
builder.add_node("tools", ToolNode([lookup]))
builder.add_edge(START, "model")
builder.add_conditional_edges("model", tools_condition)
builder.add_edge("tools", "model")
graph = builder.compile()
