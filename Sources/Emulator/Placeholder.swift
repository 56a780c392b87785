import CallEngine
