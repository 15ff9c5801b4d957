#!/usr/bin/perl
# fixtures.pl: the exec handlers of the conformance fixture app
# (tests/conformance/phantom.yaml). Every tool, prompt and resource template
# the official MCP conformance suite calls, answering what the suite asks of
# it (each scenario's "Server Implementation Requirements").
#
# Phantom's exec contract (phantom.yaml(5)): one JSON object on stdin
#   {kind, name | uri, arguments, principal, clientCapabilities, meta,
#    state?, inputResponses?}
# and one JSON object on stdout: a result, or
#   {inputRequired: {inputRequests: {...}, state: {...}}}
# whose state comes back sealed in requestState on the client's retry.
# Progress and log lines go to fd 3, one JSON object a line.
#
# Perl with JSON::PP only (both ship with Debian's perl): no other module.
use strict;
use warnings;
use JSON::PP;
use Time::HiRes qw(sleep);

my $json = JSON::PP->new->canonical->utf8;
my $TRUE = JSON::PP::true;
my $FALSE = JSON::PP::false;

# A 1x1 PNG and a minimal WAV: the constants the suite's reference servers use.
my $PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
my $WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

my $in = do { local $/; <STDIN> };
my $call = eval { $json->decode($in) };
die "fixtures.pl: stdin is not a JSON object\n" unless ref $call eq 'HASH';
my $kind = $call->{kind} // '';
my $name = $call->{name} // '';
my $args = ref $call->{arguments} eq 'HASH' ? $call->{arguments} : {};
my $responses = ref $call->{inputResponses} eq 'HASH' ? $call->{inputResponses} : undef;
my $state = ref $call->{state} eq 'HASH' ? $call->{state} : undef;
my $caps = ref $call->{clientCapabilities} eq 'HASH' ? $call->{clientCapabilities} : {};
my $meta = ref $call->{meta} eq 'HASH' ? $call->{meta} : {};

sub out { print $json->encode($_[0]); exit 0 }
sub text { return { type => 'text', text => $_[0] } }
sub tool_text { out({ content => [text($_[0])] }) }
sub object_schema {
	my (%props) = @_;
	return { type => 'object', properties => \%props, required => [sort keys %props] };
}

# fd 3 carries progress and log lines while the handler runs; a handler
# started without it (by hand, in a test) just skips them.
my $fd3;
open($fd3, '>&=', 3) and $fd3->autoflush(1);
sub line3 { print {$fd3} $json->encode($_[0]), "\n" if $fd3 }
sub progress { line3({ progress => $_[0], total => $_[1] }) }
sub logmsg { line3({ level => $_[0], data => $_[1] }) }

# input_required with the given requests and (optional) state to seal
sub need {
	my ($requests, $st) = @_;
	my %ir = (inputRequests => $requests);
	$ir{state} = $st if $st;
	out({ inputRequired => \%ir });
}
# the content of an accepted elicitation answer under key, or undef
sub accepted {
	my ($key) = @_;
	my $r = $responses && $responses->{$_[0]};
	return undef unless ref $r eq 'HASH' && ($r->{action} // '') eq 'accept';
	return ref $r->{content} eq 'HASH' ? $r->{content} : undef;
}
sub elicit {
	my ($message, %props) = @_;
	return { method => 'elicitation/create',
		 params => { message => $message, requestedSchema => object_schema(%props) } };
}
sub sample {
	my ($prompt, $max) = @_;
	return { method => 'sampling/createMessage',
		 params => { messages => [{ role => 'user', content => text($prompt) }], maxTokens => $max } };
}
sub roots { return { method => 'roots/list', params => {} } }
my $ASK_NAME = elicit('What is your name?', name => { type => 'string' });
my $CONFIRM = elicit('Please confirm', ok => { type => 'boolean' });

# Phantom's lists change when its configuration is reloaded (SIGHUP), and
# every open subscriptions/listen stream then gets list_changed. The trigger
# tools of server-stateless reload the server that runs them: the master
# when the worker that ran us has one, else that single process.
sub reload {
	my $worker = getppid();
	my $exe = readlink("/proc/$worker/exe") // return;
	open(my $f, '<', "/proc/$worker/stat") or return;
	my $stat = <$f>;
	close $f;
	# pid (comm) state ppid ...: comm may hold spaces, so split after ')'
	my ($ppid) = $stat =~ /\)\s+\S+\s+(\d+)/;
	my $target = $ppid && (readlink("/proc/$ppid/exe") // '') eq $exe ? $ppid : $worker;
	kill 'HUP', $target;
}

my %tools;
%tools = (
	# ---- content (2025-11-25 and 2026-07-28) ----
	test_simple_text => sub { tool_text('This is a simple text response for testing.') },
	test_image_content => sub {
		out({ content => [{ type => 'image', data => $PNG, mimeType => 'image/png' }] });
	},
	test_audio_content => sub {
		out({ content => [{ type => 'audio', data => $WAV, mimeType => 'audio/wav' }] });
	},
	test_embedded_resource => sub {
		out({ content => [{ type => 'resource', resource => {
			uri => 'test://embedded-resource', mimeType => 'text/plain',
			text => 'This is an embedded resource content.' } }] });
	},
	test_multiple_content_types => sub {
		out({ content => [
			text('Multiple content types test:'),
			{ type => 'image', data => $PNG, mimeType => 'image/png' },
			{ type => 'resource', resource => {
				uri => 'test://mixed-content-resource', mimeType => 'application/json',
				text => '{"test":"data","value":123}' } } ] });
	},
	test_error_handling => sub {
		out({ isError => $TRUE,
		      content => [text('This tool intentionally returns an error for testing')] });
	},
	test_tool_with_logging => sub {
		my $i = 0;
		for my $m ('Tool execution started', 'Tool processing data', 'Tool execution completed') {
			sleep(0.05) if $i++;
			logmsg('info', $m);
		}
		tool_text('Tool with logging executed successfully');
	},
	test_tool_with_progress => sub {
		for my $p (0, 50, 100) {
			progress($p, 100);
			sleep(0.05) if $p < 100;
		}
		my $tok = $meta->{progressToken};
		tool_text(defined $tok ? "$tok" : 'no-progress-token');
	},
	json_schema_2020_12_tool => sub { tool_text('called with ' . $json->encode($args)) },
	test_x_mcp_header => sub { tool_text('region=' . ($args->{region} // '<none>')) },

	# ---- 2025-11-25 requests to the client (input_required in 2026) ----
	test_sampling => sub {
		my $r = $responses && $responses->{llm};
		need({ llm => sample($args->{prompt} // '', 100) }) unless ref $r eq 'HASH';
		tool_text('LLM response: ' . ($r->{content}{text} // $json->encode($r)));
	},
	test_elicitation => sub {
		my $r = $responses && $responses->{user};
		need({ user => elicit($args->{message} // '', username => { type => 'string' },
				      email => { type => 'string' }) }) unless ref $r eq 'HASH';
		tool_text("User response: action=$r->{action}, content=" . $json->encode($r->{content} // {}));
	},
	test_elicitation_sep1034_defaults => sub {
		my $r = $responses && $responses->{form};
		unless (ref $r eq 'HASH') {
			need({ form => { method => 'elicitation/create', params => {
				message => 'Please review and update the form fields with defaults',
				requestedSchema => { type => 'object', required => [], properties => {
					name => { type => 'string', default => 'John Doe' },
					age => { type => 'integer', default => 30 },
					score => { type => 'number', default => 95.5 },
					status => { type => 'string', enum => [qw(active inactive pending)],
						    default => 'active' },
					verified => { type => 'boolean', default => $TRUE } } } } } });
		}
		tool_text("Elicitation completed: action=$r->{action}, content=" . $json->encode($r->{content} // {}));
	},
	test_elicitation_sep1330_enums => sub {
		my $r = $responses && $responses->{form};
		unless (ref $r eq 'HASH') {
			need({ form => { method => 'elicitation/create', params => {
				message => 'Enum variants',
				requestedSchema => { type => 'object', required => [], properties => {
					untitledSingle => { type => 'string', enum => [qw(option1 option2 option3)] },
					titledSingle => { type => 'string', oneOf => [
						{ const => 'value1', title => 'First Option' },
						{ const => 'value2', title => 'Second Option' } ] },
					legacyEnum => { type => 'string', enum => [qw(opt1 opt2 opt3)],
						enumNames => ['Option One', 'Option Two', 'Option Three'] },
					untitledMulti => { type => 'array',
						items => { type => 'string', enum => [qw(option1 option2 option3)] } },
					titledMulti => { type => 'array', items => { anyOf => [
						{ const => 'value1', title => 'First Choice' },
						{ const => 'value2', title => 'Second Choice' } ] } } } } } } });
		}
		tool_text("Elicitation completed: action=$r->{action}, content=" . $json->encode($r->{content} // {}));
	},

	# ---- 2026-07-28 multi-round requests (SEP-2322) ----
	test_input_required_result_elicitation => sub {
		my $c = accepted('user_name');
		need({ user_name => $ASK_NAME }) unless $c && defined $c->{name} && !ref $c->{name};
		tool_text("Hello, $c->{name}!");
	},
	test_input_required_result_sampling => sub {
		my $r = $responses && $responses->{capital_question};
		need({ capital_question => sample('What is the capital of France?', 100) })
			unless ref $r eq 'HASH';
		tool_text('Sampling response: ' . ($r->{content}{text} // $json->encode($r)));
	},
	test_input_required_result_list_roots => sub {
		my $r = $responses && $responses->{client_roots};
		need({ client_roots => roots() }) unless ref $r eq 'HASH' && ref $r->{roots} eq 'ARRAY';
		my @uris = map { ref $_ eq 'HASH' ? $_->{uri} // '' : '' } @{ $r->{roots} };
		tool_text(sprintf('Client exposed %d root(s): %s', scalar @uris, join(', ', @uris)));
	},
	test_input_required_result_request_state => sub {
		need({ confirm => $CONFIRM }, { t => 'rs' }) unless accepted('confirm');
		# Phantom opened and verified the sealed state before calling us
		tool_text('requestState missing or not ours') unless $state && ($state->{t} // '') eq 'rs';
		tool_text('state-ok: requestState verified and confirmation received');
	},
	test_input_required_result_multiple_inputs => sub {
		my $c = accepted('user_name');
		my $g = $responses && $responses->{greeting};
		my $r = $responses && $responses->{client_roots};
		unless ($c && defined $c->{name} && ref $g eq 'HASH' && defined $g->{content}{text}
			&& ref $r eq 'HASH' && ref $r->{roots} eq 'ARRAY') {
			need({ user_name => $ASK_NAME, greeting => sample('Generate a greeting', 50),
			       client_roots => roots() }, { t => 'mi' });
		}
		tool_text(sprintf('%s %s - %d root(s)', $g->{content}{text}, $c->{name}, scalar @{ $r->{roots} }));
	},
	test_input_required_result_multi_round => sub {
		my $round = $state && ($state->{t} // '') eq 'mr' ? $state->{round} // 0 : 0;
		need({ step1 => elicit('Step 1: What is your name?', name => { type => 'string' }) },
		     { t => 'mr', round => 1 }) if $round == 0;
		if ($round == 1) {
			my $n = accepted('step1');
			need({ step2 => elicit('Step 2: What is your favorite color?', color => { type => 'string' }) },
			     { t => 'mr', round => 2, name => $n && defined $n->{name} ? $n->{name} : '?' });
		}
		my $c = accepted('step2');
		tool_text(sprintf('Multi-round complete: %s likes %s', $state->{name} // '?',
				  $c && defined $c->{color} ? $c->{color} : '?'));
	},
	test_input_required_result_tampered_state => sub {
		tool_text('integrity-ok') if $state && ($state->{t} // '') eq 'ts' && accepted('confirm');
		need({ confirm => $CONFIRM }, { t => 'ts' });
	},
	test_input_required_result_capabilities => sub {
		tool_text('Capability-aware input requests fulfilled') if $responses;
		my %req;
		$req{user_name} = $ASK_NAME if exists $caps->{elicitation};
		$req{greeting} = sample('Hi', 50) if exists $caps->{sampling};
		$req{client_roots} = roots() if exists $caps->{roots};
		need(\%req) if %req;
		tool_text('No declared capability supports input');
	},

	# ---- server-stateless (SEP-2575) probes ----
	test_missing_capability => sub {
		# asks for sampling whatever the client declared: Phantom answers
		# -32021 when sampling is not among the client's capabilities
		tool_text('sampling round-trip complete') if $responses && $responses->{llm_answer};
		need({ llm_answer => sample('pong?', 16) });
	},
	test_trigger_tool_change => sub { reload(); tool_text('tools_list_changed published') },
	test_trigger_prompt_change => sub { reload(); tool_text('prompts_list_changed published') },
	test_streaming_elicitation => sub { tool_text('stream observed') },
	test_logging_tool => sub {
		# only reaches the client when the request's _meta asked for a level
		logmsg('info', 'test_logging_tool ran');
		tool_text('logged');
	},

	# ---- the tasks extension (io.modelcontextprotocol/tasks): these run as
	# tasks when the request declares it (phantom.yaml: task:), in a process
	# the hub starts; the handler code is the same as for any tool
	greet => sub { tool_text('Hello, ' . ($args->{name} // 'world') . '!') },
	slow_compute => sub {
		my $s = $args->{seconds} // 0;
		sleep($s) if $s > 0;
		tool_text('Computed ' . ($args->{label} // 'result') . " after $s s");
	},
	failing_job => sub {
		sleep(1);
		out({ content => [text('The job failed: the input could not be processed')], isError => $TRUE });
	},
	# no JSON answer at all: a handler failure, so the task ends "failed"
	protocol_error_job => sub { sleep(0.5); print STDERR "protocol_error_job: giving up\n"; exit 3 },
	confirm_delete => sub {
		my $file = $args->{filename} // 'the file';
		my $r = $responses && $responses->{confirm};
		need({ confirm => elicit("Delete $file?", confirm => { type => 'boolean' }) })
			unless ref $r eq 'HASH';
		my $yes = ($r->{action} // '') eq 'accept' && ref $r->{content} eq 'HASH' && $r->{content}{confirm};
		tool_text($yes ? "Deleted $file" : "Kept $file");
	},
	multi_input => sub {
		my ($n, $c) = ($responses && $responses->{name}, $responses && $responses->{confirm});
		need({ name => elicit('Your name?', name => { type => 'string' }),
		       confirm => elicit('Go ahead?', confirm => { type => 'boolean' }) })
			unless ref $n eq 'HASH' && ref $c eq 'HASH';
		tool_text('Got name=' . ($n->{content}{name} // '') . ' confirm=' .
			  ($c->{content}{confirm} ? 'true' : 'false'));
	},
	# round 1 asks at once (answered inline, before any task exists); the
	# retry takes longer than the tool's task_inline_ms and becomes a task
	test_tool_with_task => sub {
		my $r = accepted('user_name');
		need({ user_name => elicit('What is your name?', name => { type => 'string' }) }) unless $r;
		sleep(2);
		tool_text('Hello, ' . ($r->{name} // '') . ', from a task');
	},
);

my %prompts = (
	test_prompt_with_embedded_resource => sub {
		out({ messages => [
			{ role => 'user', content => { type => 'resource', resource => {
				uri => $args->{resourceUri} // 'test://embedded-resource', mimeType => 'text/plain',
				text => 'Embedded resource content for testing.' } } },
			{ role => 'user', content => text('Please process the embedded resource above.') } ] });
	},
	test_input_required_result_prompt => sub {
		my $c = accepted('user_context');
		need({ user_context => elicit('What context should the prompt use?', context => { type => 'string' }) })
			unless $c && defined $c->{context} && !ref $c->{context};
		out({ messages => [{ role => 'user', content => text("Use the following context: $c->{context}") }] });
	},
);

if ($kind eq 'tool' && $tools{$name}) {
	$tools{$name}->();
} elsif ($kind eq 'prompt' && $prompts{$name}) {
	$prompts{$name}->();
} elsif ($kind eq 'resource' && ($call->{uri} // '') =~ m{^test://template/([^/]+)/data$}) {
	my $id = $args->{id} // $1;
	out({ contents => [{ uri => $call->{uri}, mimeType => 'application/json',
			     text => $json->encode({ id => $id, templateTest => $TRUE, data => "Data for ID: $id" }) }] });
}
die "fixtures.pl: no fixture for $kind $name" . ($call->{uri} ? " $call->{uri}" : '') . "\n";
