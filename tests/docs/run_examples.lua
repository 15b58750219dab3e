-- run_examples.lua - run every REPL example of the docs in a tessel REPL and compare its output with the page.
--
-- Usage: tessel tests/docs/run_examples.lua FILE.md...
--
-- What an example is. A fenced code block (``` ... ```) with at least one line that
-- starts with "> " (the REPL's prompt). Each such line is an input; the lines that
-- follow it, up to the next input or the end of the block, are what tessel printed.
-- A line starting with ">> " continues the input above it (the REPL's second prompt).
-- Lines before the first input of a block (a "$ ./tessel" and the banner) are not
-- checked. Blocks without a "> " line (Lua scripts, shell commands) are not run.
--
-- How a line is evaluated. By the REPL itself, not by a copy of it: the inputs of a
-- document are written to a file, and `tessel -e SETUP -i` reads them from it as its
-- standard input. On a stdin that is no terminal, repl/repl.c reads plain lines but
-- runs the same path as on a terminal: each line is tried as "return <line>", an
-- incomplete statement reads the next line, values print through print, errors print
-- their message alone. SETUP only changes what the page cannot see:
--   - io.stdout:setvbuf("no"): values (stdout) and error messages (stderr) go to one
--     pipe in the order they were written, as a terminal shows them;
--   - _PROMPT is a marker that cuts the output at each input, _PROMPT2 is empty;
--   - COLUMNS is emptied and NO_COLOR set: pictures are drawn 120 columns wide,
--     without ANSI colours, whatever the terminal that runs the test.
--
-- Sessions. One tessel session per document, its blocks run in order: state carries
-- across the blocks of a page (cute.md defines L once and uses it in later sections,
-- as a reader typing along does), never across pages.
--
-- What is compared. Every line exactly, after these normalizations on both sides:
--   - an address (0x followed by hex digits) becomes 0x?;
--   - a timing, a decimal number with a unit of seconds (0.0123 s, 12.5 ms, 3.1 us),
--     becomes <t> s;
--   - trailing whitespace of each line, and trailing empty lines of an output, go.
-- Nothing else: a stale page fails, and the fix is to paste what tessel prints.
--
-- Opting out. A block that cannot run here (it needs a GPU, writes files elsewhere,
-- prints a timing table that changes from run to run) is preceded by the line
--     <!-- not run: REASON -->
-- (blank lines may separate them). The reason is required. A skipped block's inputs
-- are not run, so a later block must not depend on what it defines.
--
-- Output: each mismatch with file:line, the input, and a short diff of the expected
-- (-) and actual (+) lines; a summary per file; exit status 1 on any mismatch.

local MARK = "\1tessel-prompt\1"
local SETUP = 'io.stdout:setvbuf("no") _PROMPT = "\\1tessel-prompt\\1" _PROMPT2 = ""'
local TIMEOUT = 600	-- seconds for one document's session

-- The tessel that runs this script: the lowest negative index of arg.
local function interpreter()
	local i = -1
	while arg[i - 1] ~= nil do i = i - 1 end
	return arg[i]
end

local function shquote(s)
	return "'" .. s:gsub("'", "'\\''") .. "'"
end

local function readlines(path)
	local f, err = io.open(path, "r")
	if not f then error(err, 0) end
	local lines = {}
	for l in f:lines() do lines[#lines + 1] = l end
	f:close()
	return lines
end

--[[
Parse a document into blocks: { line = n (of the opening fence), skip = reason or nil,
items = { { line = n, input = {lines}, expected = {lines} } } }. Only blocks with an
input are returned. A marker without a reason is an error.
]]
local function parse(path)
	local lines, blocks = readlines(path), {}
	local i, pending, pendingline = 1, nil, nil
	while i <= #lines do
		local l = lines[i]
		local indent, fence = l:match("^(%s*)(```+)")
		if fence then
			local block = { line = i, items = {}, skip = pending, skipline = pendingline }
			pending = nil
			local item
			i = i + 1
			while i <= #lines and not lines[i]:match("^%s*```") do
				local b = lines[i]
				if b:sub(1, #indent) == indent then b = b:sub(#indent + 1) end
				if b:match("^> ") or b == ">" then
					item = { line = i, input = { b:sub(3) }, expected = {} }
					block.items[#block.items + 1] = item
				elseif item and #item.expected == 0 and (b:match("^>> ") or b == ">>") then
					item.input[#item.input + 1] = b:sub(4)
				elseif item then
					item.expected[#item.expected + 1] = b
				end
				i = i + 1
			end
			if #block.items > 0 then blocks[#blocks + 1] = block end
		else
			local reason = l:match("^%s*<!%-%-%s*not run:(.-)%-%->%s*$")
			if reason then
				reason = reason:match("^%s*(.-)%s*$")
				if reason == "" then
					error(("%s:%d: 'not run' needs a reason"):format(path, i), 0)
				end
				pending, pendingline = reason, i
			elseif l:match("%S") then
				pending = nil
			end
		end
		i = i + 1
	end
	return blocks
end

local function normalize(s)
	s = s:gsub("%%f[%%w]0x%%x+", "0x?")
	s = s:gsub("%f[%d.]%d*%.%d+ ?[mun]?s%f[%W]", "<t> s")
	s = s:gsub("%f[%d]%d+ ?[mu]s%f[%W]", "<t> s")
	return (s:gsub("%s+$", ""))
end

-- Normalized lines, trailing empty lines dropped.
local function clean(lines)
	local out = {}
	for k, l in ipairs(lines) do out[k] = normalize(l) end
	while #out > 0 and out[#out] == "" do out[#out] = nil end
	return out
end

local function split(s)
	local lines = {}
	for l in (s .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = l end
	return lines
end

-- Run the inputs in one REPL session; returns a list of outputs (strings), one per
-- input as far as the session got, and a note when it did not end normally.
local function session(tessel, inputs)
	local name = os.tmpname()
	local f = assert(io.open(name, "w"))
	for _, input in ipairs(inputs) do
		for _, l in ipairs(input) do f:write(l, "\n") end
	end
	f:close()
	local cmd = ("COLUMNS= NO_COLOR=1 timeout %d %s -e %s -i < %s 2>&1"):format(
		TIMEOUT, shquote(tessel), shquote(SETUP), shquote(name))
	local p = assert(io.popen(cmd, "r"))
	local all = p:read("a")
	local ok, how, code = p:close()
	os.remove(name)
	local outs, pos = {}, 1
	local s, e = all:find(MARK, 1, true)
	pos = e and e + 1 or #all + 1		-- the banner comes before the first prompt
	while s do
		s, e = all:find(MARK, pos, true)
		outs[#outs + 1] = all:sub(pos, (s or #all + 1) - 1)
		if e then pos = e + 1 end
	end
	-- The last "output" is what follows the prompt that met the end of input.
	local note
	if not ok then
		note = ("tessel ended with %s %s"):format(how, tostring(code))
	end
	if #outs == #inputs + 1 then
		outs[#outs] = nil
	elseif not note then
		note = ("%d prompts for %d inputs"):format(#outs - 1, #inputs)
	end
	return outs, note
end

-- A short diff: the lines between the common prefix and suffix.
local function diff(want, got)
	local a, b = 1, 0
	while a <= #want and a <= #got and want[a] == got[a] do a = a + 1 end
	while b < #want - a + 1 and b < #got - a + 1 and want[#want - b] == got[#got - b] do
		b = b + 1
	end
	local out, MAX = {}, 12
	local function part(lines, sign)
		local last = #lines - b
		for k = a, math.min(last, a + MAX - 1) do out[#out + 1] = "    " .. sign .. " " .. lines[k] end
		if last - a + 1 > MAX then
			out[#out + 1] = ("    %s ... %d more lines"):format(sign, last - a + 1 - MAX)
		end
	end
	if a > 1 then out[#out + 1] = ("    (%d equal lines before)"):format(a - 1) end
	part(want, "-")
	part(got, "+")
	return table.concat(out, "\n")
end

local function check(tessel, path)
	local blocks = parse(path)
	local items, skipped = {}, {}
	for _, block in ipairs(blocks) do
		if block.skip then
			skipped[#skipped + 1] = block
		else
			for _, item in ipairs(block.items) do items[#items + 1] = item end
		end
	end
	-- An input the REPL would find incomplete would read the next input as its
	-- continuation and shift every output after it: it is reported, not run.
	local run, incomplete = {}, {}
	for k, item in ipairs(items) do
		local code = table.concat(item.input, "\n")
		local _, err = load(code, "=stdin")
		if not load("return " .. code .. ";", "=stdin") and err and err:match("<eof>$") then
			incomplete[k] = true
		else
			run[#run + 1] = item.input
		end
	end
	if #items + #skipped == 0 then
		io.write(("%s: no examples\n"):format(path))
		return 0
	end
	local outs, note = session(tessel, run)
	local bad, r = 0, 0
	for k, item in ipairs(items) do
		local want = clean(item.expected)
		local got
		if incomplete[k] then
			got = { "(not run: the input is incomplete; continue it on lines starting with '>> ')" }
		else
			r = r + 1
			got = outs[r] and clean(split(outs[r])) or { "(no output: the session ended)" }
		end
		local same = #want == #got
		for j = 1, #want do same = same and want[j] == got[j] end
		if not same then
			bad = bad + 1
			io.write(("%s:%d: > %s\n"):format(path, item.line, table.concat(item.input, "\n  >> ")))
			io.write(diff(want, got), "\n")
		end
	end
	if note then io.write(("%s: %s\n"):format(path, note)) end
	local nskip = 0
	for _, block in ipairs(skipped) do nskip = nskip + #block.items end
	io.write(("%s: %d examples: %d passed, %d failed, %d not run (%d blocks)\n"):format(
		path, #items + nskip, #items - bad, bad, nskip, #skipped))
	return bad + (note and 1 or 0)
end

local tessel = interpreter()
local files = {}
for _, a in ipairs(arg) do files[#files + 1] = a end
if #files == 0 then
	io.stderr:write("usage: tessel tests/docs/run_examples.lua FILE.md...\n")
	os.exit(2)
end
local failed = 0
for _, path in ipairs(files) do
	local ok, n = pcall(check, tessel, path)
	if not ok then io.write(tostring(n), "\n") end
	failed = failed + (ok and n or 1)
end
if failed > 0 then
	io.write(("docs examples: %d mismatches (-: the page, +: what tessel printed)\n"):format(failed))
	os.exit(1)
end
io.write("docs examples: all match\n")
