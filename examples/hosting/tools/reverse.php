<?php
// reverse.php: an exec tool in PHP, run as `php tools/reverse.php` for each
// call. The call is one JSON object on stdin: its "arguments" hold the input.
// Warnings go to stderr (the web server's error log), never into the answer.
ini_set('display_errors', 'stderr');
$call = json_decode(stream_get_contents(STDIN), true);
$text = (string)($call['arguments']['text'] ?? '');
$reversed = implode('', array_reverse(preg_split('//u', $text, -1, PREG_SPLIT_NO_EMPTY)));
echo json_encode(['content' => [['type' => 'text', 'text' => $reversed]]],
                 JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), "\n";
